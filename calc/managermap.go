package calc

import (
	"fmt"
	"slices"
	"strings"

	"github.com/entitlements-go/entitlements/internal/textsafe"
	"github.com/entitlements-go/entitlements/internal/yaml11"
	"github.com/entitlements-go/entitlements/validate"
)

// mmProblem is a manager-map entry whose manager names nobody: neither a person nor an entry
// of the map. The person then silently leaves every management and direct_report group above
// them (issue 22.5), which is almost always a typo ("bret" for "bert").
type mmProblem struct {
	line int
	msg  string
}

// checkManagerMap finds the people of the directory whose manager names nobody. It runs
// once per manager map read; an incremental load that reuses the base's org chart reuses
// its findings too.
func (ld *loader) checkManagerMap() {
	ld.mmProblems = nil
	if ld.dir == nil || ld.mm == nil {
		return
	}
	type bad struct{ uid, mgr string }
	var found []bad
	for id := range ld.dir.Len() {
		uid := strings.ToLower(ld.dir.UID(uint32(id)))
		m, ok := ld.mm[uid]
		if !ok || m.None || m.UID == "" {
			continue // reported by the management rules themselves (Orgchart.Err), as in the reference
		}
		mlow := strings.ToLower(m.UID)
		if _, ok := ld.dir.Lookup(mlow); ok {
			continue
		}
		if _, ok := ld.mm[mlow]; ok {
			continue // a manager who is not a person (a root above the people data) is deliberate
		}
		found = append(found, bad{uid, m.UID})
	}
	if len(found) == 0 {
		return
	}
	lines := managerMapLines(ld.mmData)
	for _, b := range found {
		hint := ld.closestUID(b.mgr)
		if hint == "" {
			hint = closest(b.mgr, func(yield func(string) bool) {
				for k := range ld.mm {
					if !yield(k) {
						return
					}
				}
			})
		}
		msg := fmt.Sprintf("manager of %s is %s, who is in neither the people data nor the manager map (%s is left out of every management group above)",
			textsafe.Excerpt(b.uid), textsafe.Excerpt(b.mgr), textsafe.Excerpt(b.uid))
		if hint != "" {
			msg += fmt.Sprintf("; did you mean %q?", hint)
		}
		ld.mmProblems = append(ld.mmProblems, mmProblem{line: lines[b.uid], msg: msg})
	}
	slices.SortStableFunc(ld.mmProblems, func(a, b mmProblem) int { return a.line - b.line })
}

// managerMapLines maps each lower-case key of a manager map to its line, for the few entries
// that are reported: the map is parsed again only when there is something to report.
func managerMapLines(data []byte) map[string]int {
	out := map[string]int{}
	if data == nil {
		return out
	}
	root, _, err := yaml11.Parse(data, yaml11.Options{AllowDates: true})
	if err != nil || root.Kind != yaml11.Map {
		return out
	}
	for _, k := range root.Keys {
		out[strings.ToLower(k.Text())] = k.Line
	}
	return out
}

// reportManagerMap reports the manager-map findings: warnings, or errors under Strict.
func (ld *loader) reportManagerMap(c *validate.Collector) {
	oc := ld.cfg.Orgchart
	if oc == nil || len(ld.mmProblems) == 0 {
		return
	}
	path := ld.cfg.Rel(oc.ManagerMapFile)
	for _, p := range ld.mmProblems {
		if ld.opt.Strict {
			c.Add(path, p.line, validate.KindUnknownManager, "%s", p.msg)
		} else {
			c.Warn(path, p.line, "%s", p.msg)
		}
	}
}
