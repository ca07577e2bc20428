package validate

// KindUnknownPerson is a username, manager or filter-list entry that names nobody in the
// people data. The reference drops such a person silently; entitlements-go warns (with the
// closest existing uid) and, under strict validation, fails.
const KindUnknownPerson Kind = "unknown person"
