package calc

import (
	"bufio"
	"bytes"
	"context"
	"io/fs"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/entitlements-go/entitlements/backends"

	"github.com/entitlements-go/entitlements/internal/synth"
	"github.com/entitlements-go/entitlements/people"
)

// countingFS records which files were read (a stat opens a file too, but reads nothing), to
// check that an incremental load reads only what changed.
type countingFS struct {
	fs.FS
	mu   sync.Mutex
	read map[string]int
}

func (c *countingFS) Open(name string) (fs.File, error) {
	f, err := c.FS.Open(name)
	if err != nil {
		return nil, err
	}
	if _, dir := f.(fs.ReadDirFile); dir {
		return f, nil
	}
	return &countingFile{File: f, name: name, c: c}, nil
}

type countingFile struct {
	fs.File
	name string
	c    *countingFS
}

func (f *countingFile) Read(p []byte) (int, error) {
	f.c.mu.Lock()
	f.c.read[f.name]++
	f.c.mu.Unlock()
	return f.File.Read(p)
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
	return Options{Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Types: backends.Types(), Getenv: func(string) (string, bool) { return "x", true }}
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
		// reuse checks what the incremental load took from the base (nil: not checked).
		reuse func(t *testing.T, inc *Repo, res *Result)
	}{
		{"nothing", func(m fstest.MapFS) []string { return nil }, func(t *testing.T, inc *Repo, res *Result) {
			want := Reuse{People: true, Orgchart: true, Files: len(inc.ld.groups), Leaves: res.Reuse.Leaves,
				Groups: len(inc.lk.order), Outputs: len(res.Groups)}
			// Every leaf of the base is looked up at least once, and none is computed again.
			if got := res.Reuse; got != want || got.Leaves < len(baseRepo.ev.leaves) || len(inc.ev.leaves) != 0 {
				t.Errorf("reuse %+v, %d leaves computed again; want %+v, at least %d leaf look-ups served by the base",
					got, len(inc.ev.leaves), want, len(baseRepo.ev.leaves))
			}
		}},
		{"a comment added to a team others reference", func(m fstest.MapFS) []string {
			m[team] = &fstest.MapFile{Data: append(bytes.Clone(m[team].Data), "\n# nothing changes\n"...)}
			return []string{team}
		}, func(t *testing.T, inc *Repo, res *Result) {
			// The team is parsed and evaluated again and found equal, so nothing that
			// references it is evaluated again; only its own output is made again.
			want := Reuse{People: true, Orgchart: true, Files: len(inc.ld.groups) - 1, Groups: len(inc.lk.order) - 1, Outputs: len(res.Groups) - 1}
			if got := res.Reuse; got.Leaves <= 0 || len(inc.ev.leaves) != 0 || got.People != want.People || got.Orgchart != want.Orgchart ||
				got.Files != want.Files || got.Groups != want.Groups || got.Outputs != want.Outputs {
				t.Errorf("reuse %+v; want %+v", got, want)
			}
		}},
		{"member added to a team others reference", func(m fstest.MapFS) []string {
			m[team] = &fstest.MapFile{Data: append(bytes.Clone(m[team].Data), "\nusername = u000007\n"...)}
			return []string{team}
		}, nil},
		{"referenced app file deleted (an error either way)", func(m fstest.MapFS) []string {
			delete(m, app)
			return []string{app}
		}, nil},
		{"aad group file deleted", func(m fstest.MapFS) []string {
			p := firstFile(base, "ldap-config/aad", ".txt", 0)
			delete(m, p)
			return []string{p}
		}, nil},
		{"group file added", func(m fstest.MapFS) []string {
			p := "ldap-config/pizza_teams/zz-new-team.txt"
			m[p] = &fstest.MapFile{Data: []byte("username = u000011\nusername = u000012\n")}
			return []string{p}
		}, nil},
		{"yaml app rewritten", func(m fstest.MapFS) []string {
			m[yamlApp] = &fstest.MapFile{Data: []byte("description: rewritten\nrules:\n  username: u000042\n")}
			return []string{yamlApp}
		}, nil},
		{"one person's manager changed", func(m fstest.MapFS) []string {
			// u000100 moves from their manager to u000001.
			m["manager-map.yaml"] = &fstest.MapFile{Data: []byte(replaceManager(t, mm, "u000100", "u000001"))}
			m["people.yaml"] = &fstest.MapFile{Data: []byte(replaceManager(t, ppl, "u000100", "u000001"))}
			return []string{"manager-map.yaml", "people.yaml"}
		}, func(t *testing.T, inc *Repo, res *Result) {
			// Only the org-chart leaves of managers above u000100, before or after, are
			// computed again.
			chain := map[string]bool{}
			for _, m := range []map[string]people.Manager{baseRepo.ld.mm, inc.ld.mm} {
				for cur := strings.ToLower(m["u000100"].UID); cur != "" && !chain[cur]; cur = strings.ToLower(m[cur].UID) {
					chain[cur] = true
				}
			}
			again := 0
			for k := range inc.ev.leaves {
				if k.method == "management" || k.method == "direct_report" {
					again++
					if !chain[strings.ToLower(k.value)] {
						t.Errorf("%s = %s computed again; %s is not above u000100", k.method, k.value, k.value)
					}
				}
			}
			if again == 0 || res.Reuse.Leaves <= 0 || res.Reuse.People || res.Reuse.Orgchart {
				t.Errorf("%d org-chart leaves computed again, reuse %+v; want some of each, people and org chart read", again, res.Reuse)
			}
		}},
		{"contractor list changed", func(m fstest.MapFS) []string {
			p := "internal/contractors.txt"
			m[p] = &fstest.MapFile{Data: append(bytes.Clone(m[p].Data), "\nusername = u000005\n"...)}
			return []string{p}
		}, nil},
		{"someone with many memberships becomes a contractor", func(m fstest.MapFS) []string {
			// A member of teams and apps: the filter's population changes where it shows,
			// so no output may be reused from the base.
			p := "internal/contractors.txt"
			uid := firstMember(t, m, team)
			m[p] = &fstest.MapFile{Data: append(bytes.Clone(m[p].Data), "\nusername = "+uid+"\n"...)}
			return []string{p}
		}, nil},
		{"person added", func(m fstest.MapFS) []string {
			m["people.yaml"] = &fstest.MapFile{Data: []byte(ppl + "zz-newcomer:\n  cn: New Comer\n  manager: u000001\n")}
			m["manager-map.yaml"] = &fstest.MapFile{Data: []byte(mm + "zz-newcomer:\n  manager: u000001\n  status:\n  - employee\n")}
			return []string{"people.yaml", "manager-map.yaml"}
		}, nil},
		{"a person's attribute changed", func(m fstest.MapFS) []string {
			m["people.yaml"] = &fstest.MapFile{Data: []byte(strings.Replace(ppl, "\nu000042:\n  cn: ", "\nu000042:\n  cn: Renamed ", 1))}
			return []string{"people.yaml"}
		}, nil},
		{"a person removed", func(m fstest.MapFS) []string {
			m["people.yaml"] = &fstest.MapFile{Data: []byte(removeEntry(t, ppl, "u000777"))}
			m["manager-map.yaml"] = &fstest.MapFile{Data: []byte(removeEntry(t, mm, "u000777"))}
			return []string{"people.yaml", "manager-map.yaml"}
		}, nil},
		{"a person's manager removed", func(m fstest.MapFS) []string {
			m["manager-map.yaml"] = &fstest.MapFile{Data: []byte(strings.Replace(replaceManager(t, mm, "u000300", "XX"), "manager: XX", "manager:", 1))}
			return []string{"manager-map.yaml"}
		}, nil},
		{"a uid given twice (the last one wins)", func(m fstest.MapFS) []string {
			m["people.yaml"] = &fstest.MapFile{Data: []byte(ppl + "u000042:\n  cn: Twice\n  manager: u000001\n")}
			return []string{"people.yaml"}
		}, nil},
		{"a uid that is not a string (an error either way)", func(m fstest.MapFS) []string {
			m["people.yaml"] = &fstest.MapFile{Data: []byte(ppl + "yes:\n  cn: Boolean\n")}
			return []string{"people.yaml"}
		}, nil},
		{"a person without attributes (an error either way)", func(m fstest.MapFS) []string {
			m["people.yaml"] = &fstest.MapFile{Data: []byte(strings.Replace(ppl, "\nu000042:\n", "\nu000042x:\nu000042:\n", 1))}
			return []string{"people.yaml"}
		}, nil},
		{"a comment and a flow mapping (not cut into entries)", func(m fstest.MapFS) []string {
			m["people.yaml"] = &fstest.MapFile{Data: []byte(ppl + "# a comment\nzz-flow: {cn: Flow, manager: u000001}\n")}
			m["manager-map.yaml"] = &fstest.MapFile{Data: []byte(mm + "zz-flow: {manager: u000001}\n")}
			return []string{"people.yaml", "manager-map.yaml"}
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			head := maps.Clone(base)
			changed := tt.mutate(head)
			full, fullErr := LoadFS(ctx, head, "config.yaml", incOptions())
			cfs := &countingFS{FS: head, read: map[string]int{}}
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
			for name := range cfs.read {
				if name == "config.yaml" {
					continue // it decides what can be reused
				}
				if name == "manager-map.yaml" && slices.Contains(changed, "people.yaml") {
					continue // the org chart is built over the people
				}
				if !slices.Contains(changed, name) {
					t.Errorf("unchanged file %s was read again", name)
				}
			}
			if tt.reuse != nil {
				tt.reuse(t, inc, incRes)
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

// removeEntry deletes uid's entry from a people or manager-map YAML text.
func removeEntry(t *testing.T, text, uid string) string {
	t.Helper()
	i := strings.Index(text, "\n"+uid+":\n")
	if i < 0 {
		t.Fatalf("no %s", uid)
	}
	j := i + 1 + len(uid) + 2
	for j < len(text) && text[j] == ' ' {
		j += strings.IndexByte(text[j:], '\n') + 1
	}
	return text[:i+1] + text[j:]
}

// TestPeopleEntriesReused: an incremental load takes every unchanged entry of a changed
// people file and manager map from the base (the same attribute maps, not copies), and parses
// only the entries that changed.
func TestPeopleEntriesReused(t *testing.T) {
	ctx := context.Background()
	base := synthFS(t, 300)
	baseRepo, err := LoadFS(ctx, base, "config.yaml", incOptions())
	if err != nil {
		t.Fatal(err)
	}
	head := maps.Clone(base)
	ppl := replaceManager(t, string(base["people.yaml"].Data), "u000100", "u000001")
	mm := replaceManager(t, string(base["manager-map.yaml"].Data), "u000100", "u000001")
	head["people.yaml"] = &fstest.MapFile{Data: []byte(ppl)}
	head["manager-map.yaml"] = &fstest.MapFile{Data: []byte(mm)}
	opt := incOptions()
	opt.Incremental = &Incremental{Base: baseRepo, Changed: func(p string) bool { return p == "people.yaml" || p == "manager-map.yaml" }}
	inc, err := LoadFS(ctx, head, "config.yaml", opt)
	if err != nil {
		t.Fatal(err)
	}
	ps, ok := inc.inc.peopleFromBase([]byte(ppl))
	if !ok {
		t.Fatal("people file not cut into entries")
	}
	same := map[string]bool{}
	for i, p := range baseRepo.ld.peopleList {
		same[p.UID] = reflect.ValueOf(p.Attrs).UnsafePointer() == reflect.ValueOf(ps[i].Attrs).UnsafePointer()
	}
	for uid, shared := range same {
		if shared == (uid == "u000100") {
			t.Errorf("%s: attributes shared with the base = %v", uid, shared)
		}
	}
	if ps[100].UID != "u000100" || ps[100].Attrs["manager"] != "u000001" {
		t.Errorf("changed entry parsed as %+v", ps[100])
	}
	m, ok := inc.inc.managerMapFromBase([]byte(mm))
	if want := (people.Manager{UID: "u000001"}); !ok || m["u000100"] != want || len(m) != len(baseRepo.ld.mm) {
		t.Errorf("manager map from base: ok %v, u000100 -> %+v, %d entries", ok, m["u000100"], len(m))
	}
	if inc.ld.mm["u000100"].UID != "u000001" {
		t.Errorf("the incremental load's org chart has u000100 -> %+v", inc.ld.mm["u000100"])
	}

	// An incremental load is a base like any other: a second change reuses its entries.
	ppl2 := replaceManager(t, ppl, "u000200", "u000001")
	head2 := maps.Clone(head)
	head2["people.yaml"] = &fstest.MapFile{Data: []byte(ppl2)}
	opt2 := incOptions()
	opt2.Incremental = &Incremental{Base: inc, Changed: func(p string) bool { return p == "people.yaml" }}
	inc2, err := LoadFS(ctx, head2, "config.yaml", opt2)
	if err != nil {
		t.Fatal(err)
	}
	ps2, ok := inc2.inc.peopleFromBase([]byte(ppl2))
	if !ok {
		t.Fatal("people file not cut into entries over an incremental base")
	}
	for i, p := range inc.ld.peopleList {
		shared := reflect.ValueOf(p.Attrs).UnsafePointer() == reflect.ValueOf(ps2[i].Attrs).UnsafePointer()
		if shared == (p.UID == "u000200") {
			t.Errorf("%s: attributes shared with the incremental base = %v", p.UID, shared)
		}
	}
}

// BenchmarkIncremental is the second load of a pull-request diff: a tree that differs from
// an already calculated base by three group files and one person's manager, loaded and
// calculated incrementally over it.
//
//	BENCH_PEOPLE=50000 go test -run '^$' -bench Incremental -benchmem ./calc
func BenchmarkIncremental(b *testing.B) {
	n := 5000
	if v := os.Getenv("BENCH_PEOPLE"); v != "" {
		if _, err := fmtSscan(v, &n); err != nil {
			b.Fatal(err)
		}
	}
	repo, err := synth.Generate(synth.Options{People: n, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	base := fstest.MapFS{}
	for p, data := range repo.Files {
		base[p] = &fstest.MapFile{Data: data}
	}
	ctx := context.Background()
	baseRepo, err := LoadFS(ctx, base, "config.yaml", incOptions())
	if err != nil {
		b.Fatal(err)
	}
	if _, err := baseRepo.Calculate(ctx); err != nil {
		b.Fatal(err)
	}
	head := maps.Clone(base)
	var changed []string
	for _, p := range []string{firstFile(base, "ldap-config/pizza_teams", ".txt", 0), firstFile(base, "ldap-config/pizza_teams", ".txt", 1),
		firstFile(base, "ldap-config/entitlements/apps", ".txt", 0)} {
		head[p] = &fstest.MapFile{Data: append(bytes.Clone(base[p].Data), "\nusername = u000123\n"...)}
		changed = append(changed, p)
	}
	for _, p := range []string{"people.yaml", "manager-map.yaml"} {
		head[p] = &fstest.MapFile{Data: []byte(replaceManager(&testing.T{}, string(base[p].Data), "u000500", "u000002"))}
		changed = append(changed, p)
	}
	opt := incOptions()
	opt.Incremental = &Incremental{Base: baseRepo, Changed: func(p string) bool { return slices.Contains(changed, p) }}
	b.ReportAllocs()
	for b.Loop() {
		r, err := LoadFS(ctx, head, "config.yaml", opt)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.Calculate(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// TestWriteJSONInChunks: a result large enough to be rendered by several goroutines is
// written byte for byte as one sequential rendering writes it.
func TestWriteJSONInChunks(t *testing.T) {
	ctx := context.Background()
	repo, err := LoadFS(ctx, synthFS(t, 1500), "config.yaml", incOptions())
	if err != nil {
		t.Fatal(err)
	}
	res, err := repo.Calculate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Groups) <= 2*jsonChunk {
		t.Fatalf("only %d groups: the chunked path is not exercised", len(res.Groups))
	}
	var seq bytes.Buffer
	bw := bufio.NewWriter(&seq)
	bw.WriteString("{\n  \"groups\": {")
	var keys []string
	if err := writeGroupEntries(bw, res.Groups, true, &keys); err != nil {
		t.Fatal(err)
	}
	bw.WriteString("\n  }\n}\n")
	bw.Flush()
	if got := resultJSON(t, res); got != seq.String() {
		t.Fatalf("chunked rendering differs from the sequential one (%d vs %d bytes)", len(got), seq.Len())
	}
}

// firstMember returns the first username of a .txt group file.
func firstMember(t *testing.T, m fstest.MapFS, path string) string {
	t.Helper()
	for _, line := range strings.Split(string(m[path].Data), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "username = "); ok {
			return strings.TrimSpace(strings.SplitN(v, ";", 2)[0])
		}
	}
	t.Fatalf("%s has no username line", path)
	return ""
}

// TestIncrementalSmallRepo: reuse decisions that the synthetic repository cannot reach.
func TestIncrementalSmallRepo(t *testing.T) {
	ctx := context.Background()
	// location = X is a custom method: it sees people attributes, so its sets cannot be
	// taken from a base whose people differ, even when the uids are the same.
	location := func(_ context.Context, value string, dir *people.Directory) ([]string, error) {
		var out []string
		for id := range dir.Len() {
			if p := dir.Person(uint32(id)); p.Attrs["location"] == value {
				out = append(out, p.UID)
			}
		}
		return out, nil
	}
	opt := func() Options {
		o := incOptions()
		o.Methods = map[string]Method{"location": location}
		return o
	}
	base := fstest.MapFS{
		"config.yaml":      {Data: []byte(conf{People: "people.yaml"}.String())},
		"people.yaml":      {Data: []byte("boss: {cn: The Boss, location: paris}\nalice: {cn: Alice, location: berlin}\nbob: {cn: Bob, location: paris}\n")},
		"manager-map.yaml": {Data: []byte("boss: {manager: boss}\nalice: {manager: boss}\nbob: {manager: alice}\n")},
		ax:                 {Data: []byte("location = berlin\n")},
		ay:                 {Data: []byte("group = a/x\nusername = boss\n")},
		by:                 {Data: []byte("management = alice\n")},
		// An unreferenced dummy-OU file that fails: a warning in every run.
		"ldap-config/lib/broken.txt": {Data: []byte("username != \n")},
	}
	baseRepo, err := LoadFS(ctx, base, "config.yaml", opt())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := baseRepo.Calculate(ctx); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		changed map[string]string
		check   func(t *testing.T, res *Result)
	}{
		{"nothing: the broken file is not read again either", nil, func(t *testing.T, res *Result) {
			if res.Reuse.Files != 4 || res.Reuse.Groups != 3 || res.Reuse.Outputs != 3 {
				t.Errorf("reuse %+v; want every file, group and output", res.Reuse)
			}
		}},
		{"bob moves to berlin", map[string]string{
			"people.yaml": "boss: {cn: The Boss, location: paris}\nalice: {cn: Alice, location: berlin}\nbob: {cn: Bob, location: berlin}\n"},
			func(t *testing.T, res *Result) {
				wantMembers(t, res, "a/x", "alice", "bob")
				wantMembers(t, res, "a/y", "alice", "bob", "boss")
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			head := maps.Clone(base)
			for p, data := range c.changed {
				head[p] = &fstest.MapFile{Data: []byte(data)}
			}
			cfs := &countingFS{FS: head, read: map[string]int{}}
			o := opt()
			o.Incremental = &Incremental{Base: baseRepo, Changed: func(p string) bool { _, ok := c.changed[p]; return ok }}
			inc, err := LoadFS(ctx, cfs, "config.yaml", o)
			if err != nil {
				t.Fatal(err)
			}
			res, err := inc.Calculate(ctx)
			if err != nil {
				t.Fatal(err)
			}
			full, err := LoadFS(ctx, head, "config.yaml", opt())
			if err != nil {
				t.Fatal(err)
			}
			fullRes, err := full.Calculate(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := resultJSON(t, res), resultJSON(t, fullRes); got != want {
				t.Errorf("incremental result\n%s\nfull\n%s", got, want)
			}
			for name := range cfs.read {
				if _, ok := c.changed[name]; !ok && name != "config.yaml" && name != "manager-map.yaml" {
					t.Errorf("unchanged file %s was read again", name)
				}
			}
			c.check(t, res)
		})
	}
}
