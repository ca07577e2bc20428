# Convenience targets. The two commands a newcomer needs are in README.md.
.PHONY: test example bench fuzz

test:
	go test -race ./...

example:
	go run ./cmd/entitlements plan --config examples/config/entitlements.yaml --state examples/state.json --now 2026-01-01

bench:
	go test -run '^$$' -bench . -benchmem ./calc
	go run ./cmd/entitlements bench --people 5000

# Short fuzzing sessions of every parser (not part of CI). FUZZTIME=5m make fuzz for longer.
FUZZTIME ?= 30s
fuzz:
	go test -run '^$$' -fuzz '^FuzzParseTxt$$' -fuzztime $(FUZZTIME) ./calc
	go test -run '^$$' -fuzz '^FuzzParseYAMLRules$$' -fuzztime $(FUZZTIME) ./calc
	go test -run '^$$' -fuzz '^FuzzConfigParse$$' -fuzztime $(FUZZTIME) ./config
	go test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./internal/yaml11
	go test -run '^$$' -fuzz '^FuzzRender$$' -fuzztime $(FUZZTIME) ./internal/erb
	go test -run '^$$' -fuzz '^FuzzNormalize$$' -fuzztime $(FUZZTIME) ./internal/dn
