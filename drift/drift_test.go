package drift_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/backends"
	"github.com/entitlements-go/entitlements/cache"
	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/drift"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/fake"
)

const (
	sreDN = "cn=sre,ou=Teams,dc=example,dc=net"
	sshDN = "cn=ssh,ou=Apps,dc=example,dc=net"
)

// repo is a config repo with two OUs (teams, apps); apps/ssh is teams/sre. bot is a person
// whom the test provider's Desire leaves out (as GitHub's ignore list does).
func repo(t *testing.T) (*calc.Repo, *calc.Result) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"config.yaml": `configuration_path: ./defs
groups:
  teams: {type: ldap, base: "ou=Teams,dc=example,dc=net", ldap_uri: "ldap://127.0.0.1:1", person_dn_format: "uid=%KEY%,ou=People"}
  apps: {type: ldap, base: "ou=Apps,dc=example,dc=net", ldap_uri: "ldap://127.0.0.1:1", person_dn_format: "uid=%KEY%,ou=People"}
people:
  y: {type: yaml, config: {filename: people.yaml}}
people_data_source: y
`,
		"people.yaml":        "alice: {}\nbob: {}\ncarol: {}\ndave: {}\nbot: {}\n",
		"defs/teams/sre.txt": "username = alice\nusername = bob\nusername = bot\n",
		"defs/apps/ssh.txt":  "group = teams/sre\n",
	}
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := calc.Load(t.Context(), filepath.Join(dir, "config.yaml"), calc.Options{Types: backends.Types(),
		Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), BaseDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Calculate(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return r, res
}

// ignoring is the fake provider with a Desire that leaves "bot" out, as GitHub's ignore
// list does, and who/when for every group that exists.
type ignoring struct {
	*fake.Provider
	modified map[string]providers.Modification // by providers.Key
	modErr   error
	asked    []string
}

func (p *ignoring) Desire(_ *providers.Target, g *providers.Group) error {
	g.Members = slices.DeleteFunc(slices.Clone(g.Members), func(m string) bool { return m == "bot" })
	return nil
}

func (p *ignoring) LastModified(_ context.Context, _ *providers.Target, dns []string) (map[string]providers.Modification, error) {
	p.asked = append(p.asked, dns...)
	if p.modErr != nil {
		return nil, p.modErr
	}
	out := map[string]providers.Modification{}
	for _, d := range dns {
		if m, ok := p.modified[providers.Key(d)]; ok {
			out[providers.Key(d)] = m
		}
	}
	return out, nil
}

// applied is the last applied state of the fixture as apply leaves it: the calculated
// members, bot included (the audit log records the calculated groups).
func applied() map[string][]string {
	return map[string][]string{sreDN: {"alice", "bob", "bot"}, sshDN: {"alice", "bob", "bot"}}
}

// held is what the services hold after that apply (bot is never written).
func held() map[string][]string {
	return map[string][]string{sreDN: {"alice", "bob"}, sshDN: {"alice", "bob"}}
}

func writeState(t *testing.T, groups map[string][]string) *cache.Predictive {
	t.Helper()
	dir := t.TempDir()
	for d, ms := range groups {
		if err := os.WriteFile(filepath.Join(dir, cache.FileNameFromDN(d)), cache.StateFile(ms, nil), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := cache.LoadPredictive(dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func seed(fp *fake.Provider, groups map[string][]string) {
	for d, ms := range groups {
		ou := "apps"
		if strings.Contains(d, "ou=Teams") {
			ou = "teams"
		}
		cn, _, _ := strings.Cut(strings.TrimPrefix(d, "cn="), ",")
		fp.Seed(ou, &providers.Group{DN: d, CN: cn, Description: cn, Members: ms})
	}
}

var when = time.Date(2026, 5, 1, 10, 15, 0, 0, time.UTC)

func TestDetect(t *testing.T) {
	type want struct {
		status  map[string]drift.Status // by OU
		groups  []string                // "kind dn +added -removed", every target
		pending int                     // changes of the definitions' plan
		unverif []string
		errIs   error // of Report.Err
	}
	clean := map[string]drift.Status{"teams": drift.Clean, "apps": drift.Clean}
	for _, tc := range []struct {
		name    string
		last    func(map[string][]string)
		service func(map[string][]string)
		setup   func(*ignoring)
		want    want
	}{
		{name: "no drift", want: want{status: clean}},
		{name: "member added out of band",
			service: func(s map[string][]string) { s[sreDN] = append(s[sreDN], "Carol") },
			want: want{status: map[string]drift.Status{"teams": drift.Drifted, "apps": drift.Clean},
				groups: []string{"changed " + sreDN + " +Carol - by cn=intruder @2026-05-01T10:15:00Z"}, pending: 1}},
		{name: "member removed out of band",
			service: func(s map[string][]string) { s[sshDN] = []string{"alice"} },
			want: want{status: map[string]drift.Status{"teams": drift.Clean, "apps": drift.Drifted},
				groups: []string{"changed " + sshDN + " + -bob"}, pending: 1}},
		{name: "group deleted out of band",
			service: func(s map[string][]string) { delete(s, sshDN) },
			want: want{status: map[string]drift.Status{"teams": drift.Clean, "apps": drift.Drifted},
				groups: []string{"deleted " + sshDN + " + -alice,bob"}, pending: 1}},
		{name: "group created out of band",
			service: func(s map[string][]string) { s["cn=rogue,ou=Apps,dc=example,dc=net"] = []string{"dave"} },
			want: want{status: map[string]drift.Status{"teams": drift.Clean, "apps": drift.Drifted},
				groups: []string{"created cn=rogue,ou=Apps,dc=example,dc=net +dave -"}, pending: 1}},
		{name: "case differences are no drift",
			service: func(s map[string][]string) { s[sreDN] = []string{"ALICE", "Bob"} },
			want:    want{status: clean}},
		{name: "the definitions changed since the last apply: pending, no drift",
			last: func(l map[string][]string) {
				l[sreDN] = []string{"alice"}
				l[sshDN] = []string{"alice"}
			},
			service: func(s map[string][]string) {
				s[sreDN] = []string{"alice"}
				s[sshDN] = []string{"alice"}
			},
			want: want{status: clean, pending: 2}},
		{name: "drift the definitions want undone and drift they agree with",
			last: func(l map[string][]string) { l[sreDN] = []string{"alice"} },
			// bob was added by hand, as a pending change of the definitions also wants: it
			// is drift all the same (not made by the tool); the ssh change is undone.
			service: func(s map[string][]string) { s[sshDN] = []string{"alice", "bob", "dave"} },
			want: want{status: map[string]drift.Status{"teams": drift.Drifted, "apps": drift.Drifted},
				groups: []string{"changed " + sshDN + " +dave -", "changed " + sreDN + " +bob - by cn=intruder @2026-05-01T10:15:00Z"}, pending: 1}},
		{name: "a target never applied with this state is unknown, never clean",
			last: func(l map[string][]string) { delete(l, sshDN) },
			want: want{status: map[string]drift.Status{"teams": drift.Clean, "apps": drift.Unknown}, errIs: drift.ErrNeverApplied}},
		{name: "a target whose read fails is unknown",
			setup: func(p *ignoring) { p.FailRead("teams", errors.New("connection refused")) },
			want:  want{status: map[string]drift.Status{"teams": drift.Unknown, "apps": drift.Clean}, errIs: errAny}},
		{name: "a group no longer defined that a provider reading defined groups only did not read",
			last:  func(l map[string][]string) { l["cn=old,ou=Apps,dc=example,dc=net"] = []string{"dave"} },
			setup: func(p *ignoring) { p.SetDeletes(false) },
			want:  want{status: clean, unverif: []string{"cn=old,ou=Apps,dc=example,dc=net"}}},
		{name: "the same group, by a provider that reads its whole target, was deleted",
			last: func(l map[string][]string) { l["cn=old,ou=Apps,dc=example,dc=net"] = []string{"dave"} },
			want: want{status: map[string]drift.Status{"teams": drift.Clean, "apps": drift.Drifted},
				groups: []string{"deleted cn=old,ou=Apps,dc=example,dc=net + -dave"}}},
		{name: "who and when cannot be read: the drift is still known",
			service: func(s map[string][]string) { s[sreDN] = []string{"alice"} },
			setup:   func(p *ignoring) { p.modErr = errors.New("insufficient access") },
			want: want{status: map[string]drift.Status{"teams": drift.Drifted, "apps": drift.Clean},
				groups: []string{"changed " + sreDN + " + -bob"}, pending: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, res := repo(t)
			last, now := applied(), held()
			if tc.last != nil {
				tc.last(last)
			}
			if tc.service != nil {
				tc.service(now)
			}
			p := &ignoring{Provider: fake.New(), modified: map[string]providers.Modification{
				providers.Key(sreDN): {By: "cn=intruder", At: when}}}
			seed(p.Provider, now)
			if tc.setup != nil {
				tc.setup(p)
			}
			reg := backends.Spec().WithFactory(func(*config.OU) (providers.Provider, error) { return p, nil })
			rep, err := drift.Detect(t.Context(), r, res, drift.Options{Backends: reg, LastApplied: writeState(t, last)})
			if err != nil {
				t.Fatal(err)
			}
			var groups, unverif []string
			for _, tg := range rep.Targets {
				if got, want := tg.Status, tc.want.status[tg.OU]; got != want {
					t.Errorf("%s: status %s, want %s (err %v)", tg.OU, got, want, tg.Err)
				}
				for _, g := range tg.Groups {
					s := g.Kind.String() + " " + g.DN + " +" + strings.Join(g.Added, ",") + " -" + strings.Join(g.Removed, ",")
					if g.Modified.By != "" || !g.Modified.At.IsZero() {
						s += " by " + g.Modified.By + " @" + g.Modified.At.Format(time.RFC3339)
					}
					groups = append(groups, s)
				}
				unverif = append(unverif, tg.Unverified...)
				if (tg.AttributionErr != nil) != (p.modErr != nil && tg.Status == drift.Drifted) {
					t.Errorf("%s: attribution error %v", tg.OU, tg.AttributionErr)
				}
			}
			if !slices.Equal(groups, tc.want.groups) {
				t.Errorf("drift:\n  %s\nwant:\n  %s", strings.Join(groups, "\n  "), strings.Join(tc.want.groups, "\n  "))
			}
			if !slices.Equal(unverif, tc.want.unverif) {
				t.Errorf("unverified %q, want %q", unverif, tc.want.unverif)
			}
			if got := rep.Drifted(); got != (len(tc.want.groups) > 0) {
				t.Errorf("Drifted() = %v", got)
			}
			switch err := rep.Err(); {
			case tc.want.errIs == nil && err != nil:
				t.Errorf("Err() = %v", err)
			case tc.want.errIs == errAny && err == nil, tc.want.errIs != nil && tc.want.errIs != errAny && !errors.Is(err, tc.want.errIs):
				t.Errorf("Err() = %v, want %v", err, tc.want.errIs)
			}
			pending := 0
			for _, tp := range rep.Plan.Targets {
				pending += len(tp.Changes)
			}
			if pending != tc.want.pending {
				t.Errorf("%d pending change(s) of the definitions, want %d", pending, tc.want.pending)
			}
			// Drift only reads: nothing was written, and who/when was asked only of groups that
			// drifted and exist.
			for _, c := range p.Calls() {
				if c.Op != "read" {
					t.Errorf("drift made a %s call", c.Op)
				}
			}
			for _, d := range p.asked {
				if !slices.ContainsFunc(groups, func(g string) bool { return strings.Contains(g, d) && !strings.HasPrefix(g, "deleted") }) {
					t.Errorf("who/when asked of %s, which did not drift (or is gone)", d)
				}
			}
		})
	}
}

// errAny stands for "some error" in the table.
var errAny = errors.New("any error")

// Without a last applied state, drift cannot be known: an error before anything is read,
// never an empty report.
func TestDetectWithoutLastApplied(t *testing.T) {
	r, res := repo(t)
	fp := fake.New()
	seed(fp, held())
	reg := backends.Spec().WithFactory(func(*config.OU) (providers.Provider, error) { return fp, nil })
	empty, err := cache.LoadPredictive(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, last := range map[string]*cache.Predictive{"none": nil, "empty": empty} {
		t.Run(name, func(t *testing.T) {
			rep, err := drift.Detect(t.Context(), r, res, drift.Options{Backends: reg, LastApplied: last})
			if !errors.Is(err, drift.ErrNoLastApplied) || rep != nil {
				t.Errorf("Detect = %v, %v; want ErrNoLastApplied", rep, err)
			}
		})
	}
	if len(fp.Calls()) != 0 {
		t.Errorf("targets were read: %v", fp.Calls())
	}
	if _, err := drift.Detect(t.Context(), r, res, drift.Options{LastApplied: empty}); !errors.Is(err, drift.ErrNoBackends) {
		t.Errorf("no backends: %v", err)
	}
}

func TestTotals(t *testing.T) {
	rep := &drift.Report{Targets: []*drift.Target{
		{Status: drift.Drifted, Groups: []*drift.Group{
			{Kind: drift.Changed, Added: []string{"a"}, Removed: []string{"b", "c"}},
			{Kind: drift.Created, Added: []string{"d"}},
		}},
		{Status: drift.Clean},
		{Status: drift.Drifted, Groups: []*drift.Group{{Kind: drift.Deleted, Removed: []string{"e"}}}},
	}}
	want := drift.Totals{Targets: 2, Groups: 3, Created: 1, Deleted: 1, Added: 2, Removed: 3}
	if got := rep.Totals(); got != want {
		t.Errorf("Totals() = %+v, want %+v", got, want)
	}
}
