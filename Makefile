# Convenience targets. The two commands a newcomer needs are in README.md.
.PHONY: test example bench fuzz

test:
	go test -race ./...

example:
	go run ./cmd/entitlements plan --config examples/config/entitlements.yaml --state examples/state.json --now 2026-01-01

bench:
	go test -run '^$$' -bench . -benchmem ./calc
	go run ./cmd/entitlements-bench --people 5000

# Short fuzzing sessions of every parser (not part of CI). FUZZTIME=5m make fuzz for longer.
FUZZTIME ?= 30s
fuzz:
	go test -run '^$$' -fuzz '^FuzzParseTxt$$' -fuzztime $(FUZZTIME) ./calc
	go test -run '^$$' -fuzz '^FuzzParseYAMLRules$$' -fuzztime $(FUZZTIME) ./calc
	go test -run '^$$' -fuzz '^FuzzConfigParse$$' -fuzztime $(FUZZTIME) ./config
	go test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./internal/yaml11
	go test -run '^$$' -fuzz '^FuzzRender$$' -fuzztime $(FUZZTIME) ./internal/erb
	go test -run '^$$' -fuzz '^FuzzNormalize$$' -fuzztime $(FUZZTIME) ./internal/dn

# Mutation testing (not part of CI; run it before touching safety code: the removal guard,
# deploy, the caches, the LDAP provider). gremlins makes small deliberate bugs and runs the
# tests; a mutant that survives is a missing test, or an equivalent mutant listed with its
# reason in MUTANTS.md next to the package. The guarded packages must keep efficacy and mutant
# coverage at 90% or more (the run fails otherwise); calc and validate are reported only.
# It runs on a copy of the main module (no providers/aad, no go.work): the Azure AD provider is
# a module of its own, which gremlins' `go test ./<pkg>/...` never needs.
# The LDAP tests start slapd and need the conformance corpus (ENTITLEMENTS_CONFORMANCE_DIR,
# default ../shared/conformance/cases). One package at a time, one worker: slow, but honest
# on a small machine. MUTATE_PKGS=cache make mutate for one package.
# A mutant's tests may run MUTATE_TIMEOUT times as long as the unmutated coverage run (gremlins'
# default is 3); 5 leaves room for a loaded machine, where a spurious time-out would hide a
# surviving mutant (time-outs count in neither efficacy nor coverage). GOFLAGS=-count=1: the
# timeout is a multiple of the coverage run's time, which a cached test result would make tiny;
# -vet=off: go vet proves nothing about a mutant and costs a second or two on each.
# gremlins v0.6.0 never runs the mutants of switch case expressions (NOT COVERED, gremlins#298);
# deploy has 11 of them (run by hand, see deploy/MUTANTS.md), so its coverage gate is 80%.
GREMLINS ?= go run github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0
MUTATE_TIMEOUT ?= 5
MUTATE_PKGS ?= guard providers deploy cache providers/ldap calc validate
MUTATE_GUARDED := guard providers deploy cache providers/ldap
ENTITLEMENTS_CONFORMANCE_DIR ?= $(abspath ../shared/conformance/cases)
export ENTITLEMENTS_CONFORMANCE_DIR
.PHONY: mutate
mutate:
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	tar --exclude=./.git --exclude=./providers/aad --exclude=./go.work --exclude=./go.work.sum -cf - . | tar -xf - -C "$$tmp"; \
	status=0; \
	for p in $(MUTATE_PKGS); do \
		excl='^$$'; [ "$$p" = providers ] && excl='(aad|github|ldap|fake)/'; \
		gate=''; case " $(MUTATE_GUARDED) " in *" $$p "*) gate='--threshold-efficacy 90 --threshold-mcover 90';; esac; \
		[ "$$p" = deploy ] && gate='--threshold-efficacy 90 --threshold-mcover 80'; \
		echo "== gremlins unleash ./$$p"; \
		(cd "$$tmp" && GOFLAGS="-count=1 -vet=off" $(GREMLINS) unleash --workers 1 --timeout-coefficient $(MUTATE_TIMEOUT) -E "$$excl" $$gate ./$$p) || status=1; \
	done; exit $$status
