package review

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/drift"
	"github.com/entitlements-go/entitlements/providers"
)

// hostileDrift is a drift report with every status and kind of group, long member lists,
// who and when, an attribution error, and a plan of pending changes.
func hostileDrift(v func(int) string) (*drift.Report, []string, []string) {
	f := &fields{v: v}
	var code, text []string
	plan, _, _ := hostilePlan(v)
	r := &drift.Report{Plan: plan, LastApplied: 7}
	for i, st := range []drift.Status{drift.Drifted, drift.Unknown, drift.NotCompared, drift.Clean, drift.Drifted} {
		t := &drift.Target{OU: f.next(), Type: f.next(), Status: st, Compared: 3}
		text = append(text, t.Type)
		switch st {
		case drift.Unknown, drift.NotCompared:
			t.Err = errors.New(f.next())
			text = append(text, t.OU, t.Err.Error())
		case drift.Drifted:
			code = append(code, t.OU)
			for k, kind := range []drift.Kind{drift.Changed, drift.Created, drift.Deleted} {
				g := &drift.Group{DN: f.next(), Kind: kind}
				if kind != drift.Deleted {
					g.Modified = providers.Modification{By: f.next(), At: time.Date(2026, 5, 1, 10, 15, k, 0, time.UTC)}
					text = append(text, g.Modified.By)
					for range 3 + 20*i {
						g.Added = append(g.Added, f.next())
					}
					text = append(text, g.Added[:min(len(g.Added), driftMaxNames)]...)
				}
				if kind != drift.Created {
					g.Removed = append(g.Removed, f.next())
					text = append(text, g.Removed...)
				}
				text = append(text, g.DN)
				t.Groups = append(t.Groups, g)
			}
			if i > 0 {
				t.AttributionErr = errors.New(f.next())
				text = append(text, t.AttributionErr.Error())
			}
		default:
			text = append(text, t.OU)
		}
		r.Targets = append(r.Targets, t)
	}
	return r, code, text
}

// sampleDrift is an ordinary report: one group changed by hand (with who and when), one
// created, one deleted, a clean target, an unknown one, and a pending change.
func sampleDrift() *drift.Report {
	at := time.Date(2026, 5, 1, 10, 15, 0, 0, time.UTC)
	upd := &providers.Change{Kind: providers.UpdateGroup, OU: "apps", DN: "cn=ssh,ou=Apps,dc=example,dc=net", Add: []string{"bob"}}
	return &drift.Report{LastApplied: 5,
		Plan: &deploy.Plan{Targets: []*deploy.TargetPlan{{OU: "apps", Type: "ldap", Changes: []*providers.Change{upd}},
			{OU: "teams", Type: "ldap"}, {OU: "gh", Type: "github_team", Err: errors.New("reading current state: 502")}}},
		Targets: []*drift.Target{
			{OU: "apps", Type: "ldap", Status: drift.Drifted, Compared: 3, Groups: []*drift.Group{
				{DN: "cn=ssh,ou=Apps,dc=example,dc=net", Kind: drift.Changed, Added: []string{"mallory"}, Removed: []string{"bob"},
					Modified: providers.Modification{By: "cn=intruder,dc=example,dc=net", At: at}},
				{DN: "cn=rogue,ou=Apps,dc=example,dc=net", Kind: drift.Created, Added: []string{"eve"}},
				{DN: "cn=wiki,ou=Apps,dc=example,dc=net", Kind: drift.Deleted, Removed: []string{"alice", "carol"}},
			}},
			{OU: "teams", Type: "ldap", Status: drift.Clean, Compared: 2, Unverified: []string{"cn=old,ou=Teams,dc=example,dc=net"}},
			{OU: "gh", Type: "github_team", Status: drift.Unknown, Err: errors.New("reading current state: 502")},
		}}
}

func TestWriteDriftText(t *testing.T) {
	var b strings.Builder
	WriteDriftText(&b, sampleDrift(), DriftTextOptions{})
	want := `Drift: changes made outside entitlements since the last apply (the last applied state holds 5 group(s))
apps (ldap): DRIFT: 3 of 3 group(s) changed outside the tool
  ~ CHANGED cn=ssh,ou=Apps,dc=example,dc=net (last modified by cn=intruder,dc=example,dc=net at 2026-05-01T10:15:00Z)
    .  + mallory
    .  - bob
  + CREATED cn=rogue,ou=Apps,dc=example,dc=net (never applied; 1 member(s))
    .  + eve
  - DELETED cn=wiki,ou=Apps,dc=example,dc=net (had 2 member(s) when last applied)
    .  - alice
    .  - carol
teams (ldap): no drift (2 group(s) compared)
  (1 group(s) of the last applied state are no longer defined and were not read, so not verified: cn=old,ou=Teams,dc=example,dc=net)
gh (github_team): UNKNOWN: reading current state: 502
Drift: 3 group(s) of 1 target(s) changed outside the tool: 2 member(s) added, 3 removed, 1 group(s) created, 1 deleted (1 target(s) unknown: their drift is not known)

Pending changes of the current definitions (what plan and apply would write; not drift):
apps (ldap): 1 change(s)
  ~ CHANGE cn=ssh,ou=Apps,dc=example,dc=net
    .  + bob
teams (ldap): no changes
gh (github_team): ERROR: reading current state: 502
Plan: 0 to create, 1 to update, 0 to delete (1 target(s) failed or refused: nothing will be written to them)
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestWriteDriftJSON(t *testing.T) {
	var b strings.Builder
	if err := WriteDriftJSON(&b, sampleDrift()); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Version    int            `json:"version"`
		DriftFound bool           `json:"drift_found"`
		Last       int            `json:"last_applied_groups"`
		Totals     map[string]int `json:"totals"`
		OutOfBand  []struct {
			OU, Type, Status, Error string
			Compared                int
			Unverified              []string
			Groups                  []struct {
				DN, Change     string
				Added, Removed []string
				ModifiedBy     string `json:"modified_by"`
				ModifiedAt     string `json:"modified_at"`
			}
		} `json:"out_of_band"`
		Pending struct {
			Targets []struct {
				OU      string
				Changes []map[string]any
			}
		}
	}
	if err := json.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatal(err)
	}
	o := doc.OutOfBand
	got := fmt.Sprintf("v%d drift=%v last=%d totals=%v | %s %s %d | %s %s %q %q %s %s | %s %v | %s %s",
		doc.Version, doc.DriftFound, doc.Last, doc.Totals, o[0].OU, o[0].Status, len(o[0].Groups),
		o[0].Groups[0].DN, o[0].Groups[0].Change, o[0].Groups[0].Added, o[0].Groups[0].Removed, o[0].Groups[0].ModifiedBy, o[0].Groups[0].ModifiedAt,
		o[1].Status, o[1].Unverified, o[2].Status, o[2].Error)
	want := `v1 drift=true last=5 totals=map[added:2 created:1 deleted:1 groups:3 removed:3 targets:1] | apps drift 3 | ` +
		`cn=ssh,ou=Apps,dc=example,dc=net changed ["mallory"] ["bob"] cn=intruder,dc=example,dc=net 2026-05-01T10:15:00Z | ` +
		`no_drift [cn=old,ou=Teams,dc=example,dc=net] | unknown reading current state: 502`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// Stable shape: arrays are never null, who and when only where known.
	for _, s := range []string{`"removed": []`, `"groups": []`} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("no %s in:\n%s", s, b.String())
		}
	}
	if strings.Count(b.String(), `"modified_by"`) != 1 {
		t.Errorf("modified_by is written where the service said nothing:\n%s", b.String())
	}
	if len(doc.Pending.Targets) != 3 || len(doc.Pending.Targets[0].Changes) != 1 || doc.Pending.Targets[0].Changes[0]["kind"] != "update" {
		t.Errorf("pending: %+v", doc.Pending)
	}
}

func TestWriteDriftMarkdown(t *testing.T) {
	var b strings.Builder
	if err := WriteDriftMarkdown(&b, sampleDrift(), MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	doc := b.String()
	for _, s := range []string{
		"### Entitlements drift\n",
		"**Access was changed outside entitlements** since the last apply: 3 group(s) of 1 target(s)",
		"The drift of 1 target(s) is **unknown**",
		"| apps | ldap | ⚠️ drift | 3 | 2 | 3 |\n",
		"| teams | ldap | none | 0 | 0 | 0 |\n",
		"| gh | github\\_team | ❓ unknown: reading current state: 502 | 0 | 0 | 0 |\n",
		"**Pending changes of the definitions** (not drift: what `entitlements plan` and `apply` would write): 0 to create, 1 to update",
		"#### `apps` (ldap): 3 group(s) changed outside the tool\n",
		"| cn=ssh,ou=Apps,dc=example,dc=net | changed | mallory | bob | cn=intruder,dc=example,dc=net | 2026-05-01 10:15:00 UTC |\n",
		"| cn=wiki,ou=Apps,dc=example,dc=net | deleted |  | alice, carol |  |  |\n",
	} {
		if !strings.Contains(doc, s) {
			t.Errorf("no %q in:\n%s", s, doc)
		}
	}
	// A clean report says so, and never when a target is unknown.
	clean := &drift.Report{Plan: &deploy.Plan{}, Targets: []*drift.Target{{OU: "a", Type: "ldap"}}}
	b.Reset()
	WriteDriftMarkdown(&b, clean, MarkdownOptions{})
	if !strings.Contains(b.String(), "No drift: every target holds what was last applied.") {
		t.Errorf("clean:\n%s", b.String())
	}
	clean.Targets[0].Status, clean.Targets[0].Err = drift.Unknown, errors.New("x")
	b.Reset()
	WriteDriftMarkdown(&b, clean, MarkdownOptions{})
	if strings.Contains(b.String(), "No drift") {
		t.Errorf("unknown said clean:\n%s", b.String())
	}
}

// A member list longer than a cell holds names the first ones and counts the rest.
func TestDriftMarkdownLongLists(t *testing.T) {
	g := &drift.Group{DN: "cn=big", Kind: drift.Created}
	for i := range 45 {
		g.Added = append(g.Added, fmt.Sprintf("u%02d", i))
	}
	r := &drift.Report{Plan: &deploy.Plan{}, Targets: []*drift.Target{{OU: "a", Type: "ldap", Status: drift.Drifted, Groups: []*drift.Group{g}}}}
	var b strings.Builder
	WriteDriftMarkdown(&b, r, MarkdownOptions{})
	if !strings.Contains(b.String(), "u19, +25 more |") || strings.Contains(b.String(), "u20") {
		t.Errorf("long list:\n%s", b.String())
	}
}
