package review

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// GitHubCommentLimit is the largest body GitHub accepts for an issue or pull-request
// comment, in characters.
const GitHubCommentLimit = 65536

// MarkdownOptions tune the Markdown renderers. The zero value is the documented default for
// every field.
type MarkdownOptions struct {
	// Limit is the largest output in bytes (a byte is never less than a character, so the
	// output also fits a limit counted in characters). Sections that do not fit are left out
	// whole and a note says how many. Default GitHubCommentLimit; a smaller value than
	// minMarkdownLimit is raised to it (the note alone needs some room).
	Limit int
	// Collapse wraps member and change lists longer than this in <details>. Default 10.
	Collapse int
	// Title is the heading. Default "Entitlements diff" (Diff) or "Entitlements plan" (plan).
	Title string
	// MaxNames is how many people a diff lists by name under a reason they share (the rest
	// are counted: "+37 more"). Default 20; negative: all.
	MaxNames int
	// Full renders the whole diff for a file rather than a comment: no size limit, every
	// person named (Limit and MaxNames are ignored).
	Full bool
}

func (o MarkdownOptions) withDefaults(title string) MarkdownOptions {
	if o.Limit <= 0 {
		o.Limit = GitHubCommentLimit
	}
	o.Limit = max(o.Limit, minMarkdownLimit)
	if o.Collapse <= 0 {
		o.Collapse = 10
	}
	if o.Title == "" {
		o.Title = title
	}
	if o.MaxNames == 0 {
		o.MaxNames = 20
	}
	if o.Full {
		o.Limit, o.MaxNames = math.MaxInt, -1
	}
	return o
}

// mdDoc assembles a Markdown document from a head and sections within a size limit.
type mdDoc struct {
	head     strings.Builder
	sections []string
	// primary is how many of the first sections the document is about (the groups a change
	// edits): the note says when any of them had to be left out.
	primary int
	// shortened: lists were shortened to fit (said in the note).
	shortened bool
	// full says where the whole document is, at the end of the note.
	full string
}

// truncationReserve is the worst-case size of the note, reserved when sections are left out.
const truncationReserve = 400

// minMarkdownLimit is the smallest MarkdownOptions.Limit.
const minMarkdownLimit = 2 * truncationReserve

// write writes the head and as many whole sections as fit within limit. A section is never
// cut (an escape, a code span or a <details> block would be left open); a head that alone
// does not fit is cut after a whole line, which holds the same guarantee because data never
// contains a newline.
func (d *mdDoc) write(w io.Writer, limit int, what string) error {
	var b strings.Builder
	head := d.head.String()
	headCut := false
	if len(head) > limit-truncationReserve {
		head = head[:strings.LastIndexByte(head[:limit-truncationReserve], '\n')+1]
		headCut = true
	}
	b.WriteString(head)
	shown := 0
	for i, s := range d.sections {
		rest := 0
		if i < len(d.sections)-1 {
			rest = truncationReserve
		}
		if headCut || b.Len()+len(s)+rest > limit {
			break
		}
		b.WriteString(s)
		shown++
	}
	left := len(d.sections) - shown
	if left > 0 || headCut || d.shortened {
		var what2 []string
		if left > 0 || headCut {
			summary := ""
			if headCut {
				summary = "the end of the summary and "
			}
			edited := ""
			if lp := d.primary - min(shown, d.primary); lp > 0 {
				edited = fmt.Sprintf(" (%d of them edited by this change)", lp)
			}
			what2 = append(what2, fmt.Sprintf("%s%d more %s not shown%s", summary, left, what, edited))
		}
		if d.shortened {
			what2 = append(what2, "long lists shortened")
		}
		full := d.full
		if full == "" {
			full = "Run the command with `--format text` (or `json`) for the full list."
		}
		fmt.Fprintf(&b, "\n> [!WARNING]\n> Truncated: %s, to stay within the %d-character comment limit. %s\n",
			strings.Join(what2, ", and "), limit, full)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// list writes items (already escaped) as a bullet list, collapsed in <details> when there
// are many. summary is HTML and must hold no data. more counts the items left out of a
// shortened list.
func list(b *strings.Builder, summary string, items []string, collapse, more int) {
	if len(items) == 0 && more == 0 {
		return
	}
	if len(items) > collapse {
		fmt.Fprintf(b, "<details><summary>%s</summary>\n\n", summary)
	} else {
		fmt.Fprintf(b, "**%s**\n\n", summary)
	}
	for _, it := range items {
		b.WriteString("- ")
		b.WriteString(it)
		b.WriteByte('\n')
	}
	if more > 0 {
		fmt.Fprintf(b, "- … %d more (in the full diff)\n", more)
	}
	if len(items) > collapse {
		b.WriteString("\n</details>\n")
	}
	b.WriteByte('\n')
}

// detail is how much of a group's member lists a comment shows: items per list and names
// per shared reason (negative: all).
type detail struct{ items, names int }

// detailLevels are tried in turn until the groups a change edits fit the comment: first
// everything (names per shared reason as configured), then ever shorter lists, then counts
// only.
func detailLevels(opt MarkdownOptions) []detail {
	if opt.Full {
		return []detail{{-1, -1}}
	}
	names := func(n int) int {
		if opt.MaxNames < 0 {
			return n
		}
		return min(opt.MaxNames, n)
	}
	return []detail{{-1, opt.MaxNames}, {100, names(10)}, {25, names(5)}, {5, names(3)}, {0, 0}}
}

// WriteMarkdown renders the diff for a pull-request comment: a summary table per OU, then a
// section per group with the people added and removed and why; long lists are collapsed and
// the whole stays within opt.Limit. The groups whose files the change edits come first and
// are never left out (their lists are shortened first, down to counts), then the groups that
// changed through references, filters or the org chart, left out from the end when they do
// not fit. People who share a reason are listed once under it. Every string of the diff is
// escaped for where it lands (see mdescape.go): the data cannot mention, link, embed HTML or
// change the layout.
func (d *Diff) WriteMarkdown(w io.Writer, opt MarkdownOptions) error {
	opt = opt.withDefaults("Entitlements diff")
	doc := mdDoc{full: "The full diff is in the file that `entitlements diff --out-full FILE` writes (the example workflow attaches it to the run)."}
	h := &doc.head
	fmt.Fprintf(h, "### %s\n\n", mdHeading(opt.Title))
	d.writeConfigMarkdown(h)
	if len(d.Groups) == 0 {
		h.WriteString("No access changes: every group has the same members, description and metadata.\n")
		return doc.write(w, opt.Limit, "groups")
	}
	per, t := d.Summary()
	fmt.Fprintf(h, "**%d group(s) changed** (%d created, %d deleted): **%d people gaining**, **%d losing** access.\n\n",
		t.Groups, t.Created, t.Deleted, t.Gaining, t.Losing)
	h.WriteString("| OU | groups changed | created | deleted | people gaining | people losing |\n")
	h.WriteString("| --- | ---: | ---: | ---: | ---: | ---: |\n")
	for _, s := range per {
		fmt.Fprintf(h, "| %s | %d | %d | %d | %d | %d |\n", mdCell(s.OU), s.Groups, s.Created, s.Deleted, s.Gaining, s.Losing)
	}
	if len(per) > 1 {
		fmt.Fprintf(h, "| **total** | %d | %d | %d | %d | %d |\n", t.Groups, t.Created, t.Deleted, t.Gaining, t.Losing)
	}
	h.WriteByte('\n')
	if d.Unexplained > 0 {
		fmt.Fprintf(h, "_%d membership change(s) are listed without a reason (more than the reason limit)._\n\n", d.Unexplained)
	}
	var edited, other []*GroupDiff
	for _, g := range d.Groups {
		if g.Edited {
			edited = append(edited, g)
		} else {
			other = append(other, g)
		}
	}
	// Headings say which is which when there are both.
	both := len(edited) > 0 && len(other) > 0
	levels := detailLevels(opt)
	// The first level lists everyone (but for the names beyond MaxNames under a shared
	// reason); a later one shortens lists, which the note then says.
	var lv detail
	shortened := false
	for i, l := range levels {
		lv, doc.sections, shortened = l, doc.sections[:0], false
		size := doc.head.Len() + truncationReserve
		for j, g := range edited {
			s, cut := groupMarkdown(g, l, opt)
			if j == 0 && both {
				s = fmt.Sprintf("### Groups whose files this change edits (%d)\n\n", len(edited)) + s
			}
			size += len(s)
			doc.sections = append(doc.sections, s)
			shortened = shortened || cut
		}
		// Without edited groups (or with a head that alone does not fit) shortening gains
		// nothing that must be shown.
		if size <= opt.Limit || i == len(levels)-1 || len(edited) == 0 || doc.head.Len()+truncationReserve > opt.Limit {
			doc.shortened = i > 0 && shortened
			break
		}
	}
	doc.primary = len(edited)
	for j, g := range other {
		s, cut := groupMarkdown(g, lv, opt)
		if j == 0 && both {
			s = fmt.Sprintf("### Groups changed through references, filters or the org chart (%d)\n\n", len(other)) + s
		}
		doc.sections = append(doc.sections, s)
		doc.shortened = doc.shortened || lv != levels[0] && cut
	}
	return doc.write(w, opt.Limit, "group(s)")
}

// groupMarkdown is the section of one group; cut reports whether a list was shortened.
func groupMarkdown(g *GroupDiff, lv detail, opt MarkdownOptions) (string, bool) {
	var b strings.Builder
	fmt.Fprintf(&b, "#### %s%s\n\n", mdCode(g.Key), map[Status]string{Created: " (created)", Deleted: " (deleted)", Changed: ""}[g.Status])
	fmt.Fprintf(&b, "File: %s", mdCode(g.File))
	if g.DN != "" {
		fmt.Fprintf(&b, " · DN: %s", mdCode(g.DN))
	}
	b.WriteString("\n\n")
	if g.Description != nil {
		fmt.Fprintf(&b, "Description: \"%s\" → \"%s\"\n\n", mdText(g.Description[0]), mdText(g.Description[1]))
	}
	for _, m := range g.Metadata {
		fmt.Fprintf(&b, "Metadata %s: %s → %s\n\n", mdCode(m.Key), mdCode(metaValue(m.Old)), mdCode(metaValue(m.New)))
	}
	cut := false
	for _, l := range []struct {
		what string
		ms   []Member
	}{{"➕ %d added", g.Added}, {"➖ %d removed", g.Removed}} {
		items, more, c := memberItems(l.ms, lv)
		list(&b, fmt.Sprintf(l.what, len(l.ms)), items, opt.Collapse, more)
		cut = cut || c
	}
	return b.String(), cut
}

// memberItems are the list items of people added or removed: one per person with a reason of
// their own ("`bob` — username = bob (f.txt:3)"), one per reason people share ("41 people —
// via group = pizza_teams/sre (f.txt:2): `alice`, `bob`, +39 more"). Every item starts with
// fixed text or a code span, never with data. more counts the items left out by lv; cut
// reports whether anything was.
func memberItems(ms []Member, lv detail) (items []string, more int, cut bool) {
	type share struct {
		key string
		ms  []Member
	}
	var shares []*share
	byKey := map[string]*share{}
	for _, m := range ms {
		key := m.Via
		if key == "" {
			key = m.Reason
		}
		sh := byKey[key]
		if sh == nil || key == "" {
			sh = &share{key: key}
			shares = append(shares, sh)
			if key != "" {
				byKey[key] = sh
			}
		}
		sh.ms = append(sh.ms, m)
	}
	for i, sh := range shares {
		if lv.items >= 0 && i >= lv.items {
			return items, len(shares) - i, true
		}
		if len(sh.ms) == 1 {
			m := sh.ms[0]
			it := mdCode(m.UID)
			if m.Reason != "" {
				it += " — " + mdText(m.Reason)
			}
			items = append(items, it)
			continue
		}
		label := sh.ms[0].Reason
		for _, m := range sh.ms[1:] {
			if m.Reason != label {
				label = "via " + sh.key
				break
			}
		}
		var it strings.Builder
		fmt.Fprintf(&it, "%d people — %s: ", len(sh.ms), mdText(label))
		n := len(sh.ms)
		if lv.names >= 0 {
			n = min(n, lv.names)
		}
		for j, m := range sh.ms[:n] {
			if j > 0 {
				it.WriteString(", ")
			}
			it.WriteString(mdCode(m.UID))
		}
		if rest := len(sh.ms) - n; rest > 0 {
			if n > 0 {
				it.WriteString(", ")
			}
			fmt.Fprintf(&it, "+%d more", rest)
			cut = true
		}
		items = append(items, it.String())
	}
	return items, 0, cut
}
