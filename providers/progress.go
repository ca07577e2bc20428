package providers

// ReadProgress is how far a running read of a target has come, for a progress display
// while reading a large target takes minutes.
type ReadProgress struct {
	// Groups is the number of groups read so far.
	Groups int
	// Total is the number of groups the read will have read when it ends, when the
	// provider knows it in advance (a list of teams to read); 0 when it cannot know (an
	// LDAP search does not say how many entries it will return).
	Total int
}

// ReportRead tells whoever shows the read's progress how far it has come; a no-op when
// nobody does (t or t.Progress nil), so providers may call it freely: after each page of a
// paged search, after each batch of a bulk read. Calls for one target should come in order
// (from one goroutine, or under the provider's lock): the last one is what is shown.
func (t *Target) ReportRead(p ReadProgress) {
	if t != nil && t.Progress != nil {
		t.Progress(p)
	}
}
