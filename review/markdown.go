package review

import (
	"fmt"
	"io"
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
	return o
}

// mdDoc assembles a Markdown document from a head and sections within a size limit.
type mdDoc struct {
	head     strings.Builder
	sections []string
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
	if left := len(d.sections) - shown; left > 0 || headCut {
		summary := ""
		if headCut {
			summary = "the end of the summary and "
		}
		fmt.Fprintf(&b, "\n> [!WARNING]\n> Truncated: %s%d more %s not shown, to stay within the %d-character comment limit. "+
			"Run the command with `--format text` (or `json`) for the full list.\n", summary, left, what, limit)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// list writes items (already escaped) as a bullet list, collapsed in <details> when there
// are many. summary is HTML and must hold no data.
func list(b *strings.Builder, summary string, items []string, collapse int) {
	if len(items) == 0 {
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
	if len(items) > collapse {
		b.WriteString("\n</details>\n")
	}
	b.WriteByte('\n')
}

// WriteMarkdown renders the diff for a pull-request comment: a summary table per OU, then a
// section per group with the people added and removed and why; long lists are collapsed and
// the whole stays within opt.Limit. Every string of the diff is escaped for where it lands
// (see mdescape.go): the data cannot mention, link, embed HTML or change the layout.
func (d *Diff) WriteMarkdown(w io.Writer, opt MarkdownOptions) error {
	opt = opt.withDefaults("Entitlements diff")
	var doc mdDoc
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
	for _, g := range d.Groups {
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
		list(&b, fmt.Sprintf("➕ %d added", len(g.Added)), memberItems(g.Added), opt.Collapse)
		list(&b, fmt.Sprintf("➖ %d removed", len(g.Removed)), memberItems(g.Removed), opt.Collapse)
		doc.sections = append(doc.sections, b.String())
	}
	return doc.write(w, opt.Limit, "group(s)")
}

func memberItems(ms []Member) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = mdCode(m.UID)
		if m.Reason != "" {
			out[i] += " — " + mdText(m.Reason)
		}
	}
	return out
}
