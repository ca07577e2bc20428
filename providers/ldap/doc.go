// Package ldap is the LDAP provider of entitlements-go (github.com/go-ldap/ldap/v3): groups
// of `ldap` OUs (groupOfUniqueNames, groupOfNames, posixGroup, and Active Directory's group),
// missing OUs created on demand (missing parent OUs first), the member_of person attribute,
// the LDAP people source and the reader behind ldap_group rules. Tested against OpenLDAP, 389
// Directory Server and a Samba AD DC.
//
// # Object classes and people
//
// An OU's class comes from object_class or the reference's plugin (class.go holds every rule
// about classes). It reads entries of its class (a non-AD OU reads any of the reference's
// three, in the reference's priority order); any other entry under its base is foreign:
// reported once (Provider.Warnings, Options.Logger) and never read, deleted or written. AD
// groups carry a sAMAccountName derived from the cn when created (collisions within the
// registry's targets or with any object of the domain fail the plan), a groupType kept equal
// to group_scope and group_category, managedBy (the bind DN), and no member when empty.
// People map to entries through person_dn_format, or through an attribute (person_attribute)
// of the entries under person_base, read once per registry (personmap.go).
//
// # Connection model
//
// A Registry keeps one Service per server and identity (URI, bind DN, password, TLS
// settings), and each Service a pool of at most Options.PoolSize (default 2) connections for
// the whole run. A connection is dialled and bound lazily, once, before anyone else uses it,
// and redialled when it breaks (servers close idle connections during long runs); an
// operation that met a broken connection is retried once on a new one, which is safe because
// every operation the provider sends is idempotent or maps its "already done" answer to
// success.
//
// Two kinds of operation share the pool:
//
//   - Plain operations (base-object reads, adds, modifies, deletes) are multiplexed: go-ldap
//     matches replies to requests by message ID, so any number of them can be in flight on one
//     connection, and they go to the least busy one. They never wait for a connection.
//   - Paged searches (every read of a managed base, the people search) page with the simple
//     paged results control, because servers cap plain searches (500 entries by default on
//     OpenLDAP and Active Directory). A server keeps one paged-results state per connection:
//     OpenLDAP answers a second paged search on the same connection by invalidating the first
//     one's cookie ("paged results cookie is invalid or old"). So a paged search holds its
//     connection for paging from its first page to its last; plain operations may still use
//     that connection meanwhile, but no other paged search does. A paged search that finds
//     every connection holding one waits (honouring its context) for the first to finish. At
//     most PoolSize paged searches run at once.
//
// Each managed base is read by one single-level search per run (concurrent readers of the
// same base share it, and the group reader of ldap_group rules answers from it); the read is
// dropped after the provider writes to the base, so a later plan with the same Registry reads
// it again. A search that finds entries proves that the base exists, and nothing searches for
// it again; a "no such object" answer proves it missing; any other failure fails the read,
// even with create_if_missing. A search that finds nothing proves nothing on 389 Directory
// Server, which answers a paged search of a missing base with success and no entries: one
// base-object lookup settles it, once per base and registry. Writes of one target run WriteConcurrency (default 4) at a time;
// each group is one Add or one Modify replacing whole attributes, so writes to different
// groups commute.
//
// # DNs
//
// Every DN is parsed and compared with go-ldap's RFC 4514 parser: `\,` and `\2C`
// are the same character, the values of a multi-valued RDN are unordered, case and spacing do
// not matter. A member DN becomes the unescaped value of its first RDN (the attribute of
// person_dn_format's %KEY% when that RDN is multi-valued), and uids are escaped when person
// DNs are built, so any uid round-trips.
package ldap
