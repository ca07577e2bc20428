package calc

import (
	"bytes"
	"context"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/entitlements-go/entitlements/internal/synth"
)

// countingFS records which files were opened, to check that an incremental load reads only
// what changed.
type countingFS struct {
	fs.FS
	mu     sync.Mutex
	opened map[string]int
}

func (c *countingFS) Open(name string) (fs.File, error) {
	c.mu.Lock()
	c.opened[name]++
	c.mu.Unlock()
	return c.FS.Open(name)
}

func synthFS(t *testing.T, people int) fstest.MapFS {
	t.Helper()
	repo, err := synth.Generate(synth.Options{People: people, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	m := fstest.MapFS{}
	for p, b := range repo.Files {
		m[p] = &fstest.MapFile{Data: b}
	}
	return m
}

func resultJSON(t *testing.T, res *Result) string {
	t.Helper()
	var b bytes.Buffer
	if err := res.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func incOptions() Options {
	return Options{Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Getenv: func(string) (string, bool) { return "x", true }}
}

// firstFile returns the first file (sorted) under dir with the suffix.
func firstFile(m fstest.MapFS, dir, suffix string, skip int) string {
	var out []string
	for p := range m {
		if strings.HasPrefix(p, dir+"/") && strings.HasSuffix(p, suffix) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out[skip]
}

// TestIncrementalEqualsFull: for every kind of change, an incremental load over the base
// gives byte for byte the result of a full load of the new tree, and reads only the
// changed files.
func TestIncrementalEqualsFull(t *testing.T) {
	ctx := context.Background()
	base := synthFS(t, 1500)
	baseRepo, err := LoadFS(ctx, base, "config.yaml", incOptions())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := baseRepo.Calculate(ctx); err != nil {
		t.Fatal(err)
	}
	team := firstFile(base, "ldap-config/pizza_teams", ".txt", 3)
	app := firstFile(base, "ldap-config/entitlements/apps", ".txt", 0)
	yamlApp := firstFile(base, "ldap-config/entitlements/apps", ".yaml", 0)
	mm := string(base["manager-map.yaml"].Data)
	ppl := string(base["people.yaml"].Data)
	tests := []struct {
		name   string
		mutate func(m fstest.MapFS) []string
	}{
		{"nothing", func(m fstest.MapFS) []string { return nil }},
		{"member added to a team others reference", func(m fstest.MapFS) []string {
			m[team] = &fstest.MapFile{Data: append(bytes.Clone(m[team].Data), "\nusername = u000007\n"...)}
			return []string{team}
		}},
		{"referenced app file deleted (an error either way)", func(m fstest.MapFS) []string {
			delete(m, app)
			return []string{app}
		}},
		{"aad group file deleted", func(m fstest.MapFS) []string {
			p := firstFile(base, "ldap-config/aad", ".txt", 0)
			delete(m, p)
			return []string{p}
		}},
		{"group file added", func(m fstest.MapFS) []string {
			p := "ldap-config/pizza_teams/zz-new-team.txt"
			m[p] = &fstest.MapFile{Data: []byte("username = u000011\nusername = u000012\n")}
			return []string{p}
		}},
		{"yaml app rewritten", func(m fstest.MapFS) []string {
			m[yamlApp] = &fstest.MapFile{Data: []byte("description: rewritten\nrules:\n  username: u000042\n")}
			return []string{yamlApp}
		}},
		{"one person's manager changed", func(m fstest.MapFS) []string {
			// u000100 moves from their manager to u000001.
			m["manager-map.yaml"] = &fstest.MapFile{Data: []byte(replaceManager(t, mm, "u000100", "u000001"))}
			m["people.yaml"] = &fstest.MapFile{Data: []byte(replaceManager(t, ppl, "u000100", "u000001"))}
			return []string{"manager-map.yaml", "people.yaml"}
		}},
		{"contractor list changed", func(m fstest.MapFS) []string {
			p := "internal/contractors.txt"
			m[p] = &fstest.MapFile{Data: append(bytes.Clone(m[p].Data), "\nusername = u000005\n"...)}
			return []string{p}
		}},
		{"person added", func(m fstest.MapFS) []string {
			m["people.yaml"] = &fstest.MapFile{Data: []byte(ppl + "zz-newcomer:\n  cn: New Comer\n  manager: u000001\n")}
			m["manager-map.yaml"] = &fstest.MapFile{Data: []byte(mm + "zz-newcomer:\n  manager: u000001\n  status:\n  - employee\n")}
			return []string{"people.yaml", "manager-map.yaml"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			head := maps.Clone(base)
			changed := tt.mutate(head)
			full, fullErr := LoadFS(ctx, head, "config.yaml", incOptions())
			cfs := &countingFS{FS: head, opened: map[string]int{}}
			opt := incOptions()
			opt.Incremental = &Incremental{Base: baseRepo, Changed: func(p string) bool { return slices.Contains(changed, p) }}
			inc, err := LoadFS(ctx, cfs, "config.yaml", opt)
			if fullErr != nil || err != nil {
				if fullErr == nil || err == nil || fullErr.Error() != err.Error() {
					t.Fatalf("errors differ: full %v, incremental %v", fullErr, err)
				}
				return
			}
			fullRes, err := full.Calculate(ctx)
			if err != nil {
				t.Fatal(err)
			}
			incRes, err := inc.Calculate(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := resultJSON(t, incRes), resultJSON(t, fullRes); got != want {
				t.Fatalf("incremental result differs from a full load (%d vs %d bytes)", len(got), len(want))
			}
			for name := range cfs.opened {
				if strings.HasPrefix(name, "ldap-config/") && strings.HasSuffix(name, ".txt") && !slices.Contains(changed, name) {
					t.Errorf("unchanged group file %s was read again", name)
				}
			}
		})
	}
	// The base is untouched by the loads above: explanations still follow its own groups.
	again, err := LoadFS(ctx, base, "config.yaml", incOptions())
	if err != nil {
		t.Fatal(err)
	}
	againRes, _ := again.Calculate(ctx)
	baseRes, _ := baseRepo.Calculate(ctx)
	if resultJSON(t, againRes) != resultJSON(t, baseRes) {
		t.Fatal("the base result changed")
	}
}

// replaceManager sets uid's manager in a people or manager-map YAML text.
func replaceManager(t *testing.T, text, uid, mgr string) string {
	t.Helper()
	i := strings.Index(text, "\n"+uid+":\n")
	if i < 0 {
		t.Fatalf("no %s", uid)
	}
	j := strings.Index(text[i:], "manager: ")
	if j < 0 {
		t.Fatalf("no manager for %s", uid)
	}
	j += i + len("manager: ")
	k := strings.IndexByte(text[j:], '\n') + j
	return text[:j] + mgr + text[k:]
}
