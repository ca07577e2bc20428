// Package aad is the Azure AD (Microsoft Entra ID) provider: it keeps one Entra security
// group per definition file of an `aad` OU in step with the calculated members, through
// Microsoft Graph (msgraph-sdk-go).
//
// This is the only package that imports msgraph-sdk-go: the SDK takes minutes and gigabytes to
// compile, and users who do not manage AAD must never pay for it. Keep it that way.
//
// # Mapping
//
// A definition file cn=<name> of an OU maps to the group whose mailNickname is <name>, or to
// the group whose object ID the file names in metadata_aad_object_id. A missing group is
// created when the OU sets create_if_missing (security-enabled, not mail-enabled, mailNickname
// and displayName = <name>, description from the definition). Members are users, direct
// membership only: person <uid> is the user whose userPrincipalName is user_principal_format
// with %KEY% replaced by <uid> (default "%KEY%"). Users that do not exist are reported and
// skipped with ignore_not_found, and fail the target's plan otherwise. Members that are not
// users (groups, service principals, devices), users whose UPN does not fit the format, and
// groups whose membership Graph cannot write (dynamic, mail-enabled security, distribution)
// are reported and left alone. Groups are deleted only with delete_groups: true, and only
// groups whose mailNickname starts with managed_prefix (required then): Entra has no OU, so
// without a prefix the provider could not tell its groups from everybody else's. Even then a
// group is deleted only if no definition claims it (by DN, by its mailNickname being a file's
// name, or by a metadata_aad_object_id naming it, whether or not the run read that group or
// trusted the predictive state), and only if it looks like a group this provider creates:
// security-enabled, not mail-enabled, no groupTypes (never a Microsoft 365 or dynamic group).
// If any definition was refused, no deletion is planned that run, and the log says why.
//
// A group to create whose name Graph would refuse as a mailNickname (more than 64
// characters; anything but printable ASCII; @ ( ) \ [ ] " ; : . < > , or space) fails the
// plan, naming the file and the character; an existing group with such a name is managed as
// usual.
//
// mailNickname is documented as unique only among Microsoft 365 groups: Graph takes a second
// security group with a name in use. So a create is sent only after a fresh lookup of the
// name just before it (the plan may be minutes old), which adopts a group made since.
// A group create is never sent twice for one outcome not seen (no reply, a 5xx): Graph
// accepts duplicate mailNicknames. The provider looks the name up instead, adopts the group it
// finds, and otherwise reports the change Unknown; the next run adopts the group or creates
// it. Several groups with one mailNickname fail the target's plan with their object IDs and
// the metadata_aad_object_id line that settles it.
//
// # Requests
//
// Reads go through JSON $batch (20 sub-requests): group lookups by mailNickname use `in`
// filters of 15 names (300 groups per batch); member lists use $top=999 and $select=id,
// userPrincipalName, and follow @odata.nextLink exactly as given, in rounds, but only on the
// configured Graph base (scheme, host, port and path: a link elsewhere is refused, never
// sent), never the same link twice, and at most Options.MaxPages pages per listing; every
// answer is read up to Options.MaxResponseSize. Members that a
// list returns with only @odata.type and id (Graph does so when the application may not
// read their type) are resolved by `id in (...)` in bulk; a member still unidentified fails
// the read (it must never look absent: the plan would re-add it on every run); users are
// resolved by `userPrincipalName in (...)` only for desired members that no member list of
// the target showed. Group lookups, member lists and users are cached for the Registry's life
// (or Options.CacheTTL), "not found" only for Options.NegativeCacheTTL (default 1 minute),
// and concurrent reads of the same key share one request without losing the batching
// (cache.Batched). Writes are $batch items too: member adds 20 to a PATCH /groups/{id} with
// members@odata.bind (all or nothing: 400 "already exist" splits the chunk in halves, down to
// the single add, where it means already in state) and DELETE .../members/{id}/$ref (404 =
// already gone; never the URL without /$ref, which deletes the object itself). Writes are
// paced to Graph's write quota per application and tenant (schedule.go), and Estimate says
// what an apply will send and how long it takes. A member add refused for replication lag
// after a create (400 "The source resource object or one of the objects being referenced do
// not exist.") is read back and sent again after 500ms, 1s, ... within
// Options.ReplicationLagWait. Request bodies are sent uncompressed (the SDK's compression
// handler is removed: no Graph documentation says compressed request bodies are accepted);
// responses may be compressed. Throttling and retries follow spec 4.4;
// see runBatch. A write whose reply was not seen or said 5xx is Unknown until read back, never
// simply failed nor resent blind. Every write is logged at info level through Options.Logger.
package aad
