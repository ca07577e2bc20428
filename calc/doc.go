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
// # Inside the engine
//
// Repo is a façade over four parts, each a type that owns its state; the file to open for a
// question is the part's:
//
//   - loader (load.go, loadpeople.go, managermap.go): how the repo is read. The config's
//     inputs, the people data and combined people sources, the manager map and its
//     findings, the OU directory listings and every group file, read and parsed in
//     parallel (parse_txt.go, parse_yaml.go into a definition, definition.go). After the
//     load it is only read.
//   - linker (link.go): how references are resolved. It walks the groups depth-first from
//     the outputs, resolves group references, wildcards and filter entries against the
//     listings, reports cycles with their chain, records the dependency order and the
//     output groups (mirrors included). What it resolves goes into each group's links.
//   - evaluator (eval.go): how a group's membership is computed. The rule-leaf sets
//     (username, management, direct_report, ldap_group, custom methods; memoised, and
//     asked for by the linker so that their errors have a line), the rule trees, filter
//     populations and settings, and expirations. Result building (result.go) and Explain
//     (explain.go) read its sets.
//   - incState (incremental.go): what an incremental load reuses from its base. Unchanged
//     people, manager-map entries and group definitions for the loader; leaf sets and
//     groups whose inputs did not change for the evaluator; unchanged output groups for
//     the result. A full load has none (nil), and its methods then reuse nothing.
//
// Repo (repo.go) runs them in order, load then validate (prefetch LDAP groups, link) then
// Calculate, and keeps what callers see: warnings, Timings, Reuse and the result. A group
// record (load.go) is shared by the parts, each writing its own fields.
//
// Repo.Dependencies is the dependency graph itself (what `entitlements graph` draws).
// Embedders extend the engine with Go rule methods (Options.Methods, the replacement for
// Ruby rule files), custom filter classes (Options.FilterClasses), people sources
// (Options.People) and LDAP group readers (Options.LDAPGroups). Package deploy turns a
// Result into changes on real systems.
package calc
