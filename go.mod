module github.com/entitlements-go/entitlements

go 1.26.0

require (
	github.com/RoaringBitmap/roaring/v2 v2.30.0
	github.com/go-ldap/ldap/v3 v3.4.15
	go.yaml.in/yaml/v3 v3.0.4
	golang.org/x/sync v0.25.0
)

require (
	github.com/Azure/go-ntlmssp v0.1.1 // indirect
	github.com/bits-and-blooms/bitset v1.24.4 // indirect
	github.com/go-asn1-ber/asn1-ber v1.5.8 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/mschoch/smat v0.2.0 // indirect
	golang.org/x/crypto v0.54.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
)
