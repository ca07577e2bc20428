// Package calc is the engine of entitlements-go: it loads an entitlements config repo (the
// config file, the people data, the org chart and every group definition in .txt or .yaml),
// validates all of it at once, and calculates the members of every group, as GitHub's Ruby
// entitlements-app does.
//
// A run has three steps:
//
//   - Load reads and validates the repo and builds the dependency graph between groups. Every
//     problem comes back together as a validate.List (each error is path:line: message with a
//     Kind); warnings go to Options.OnWarning. A Repo that Load returns cannot fail to
//     calculate.
//   - Repo.Calculate computes every group exactly once, in dependency order, over interned
//     people (roaring bitsets), applying filters and expirations. Result.WriteJSON prints the
//     canonical JSON that the conformance corpus compares byte for byte.
//   - Result.Explain says why a person is or is not in a group: the rule lines that matched,
//     the groups and org-chart path that brought them in, each filter's decision and the
//     expirations.
//
// Repo.Dependencies is the dependency graph itself (what `entitlements graph` draws).
// Embedders extend the engine with Go rule methods (Options.Methods, the replacement for
// Ruby rule files), custom filter classes (Options.FilterClasses), people sources
// (Options.People) and LDAP group readers (Options.LDAPGroups). Package deploy turns a
// Result into changes on real systems.
package calc
