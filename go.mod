module github.com/entitlements-go/entitlements

go 1.26.0

require (
	github.com/RoaringBitmap/roaring/v2 v2.30.0 // indirect
	github.com/bits-and-blooms/bitset v1.24.4 // indirect
	github.com/mschoch/smat v0.2.0 // indirect
	go.yaml.in/yaml/v3 v3.0.4 // indirect
	golang.org/x/sync v0.25.0 // indirect
	golang.org/x/sys v0.30.0 // indirect
)
