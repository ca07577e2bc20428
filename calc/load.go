package calc

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/internal/safefile"
	"github.com/entitlements-go/entitlements/internal/vfs"
	"github.com/entitlements-go/entitlements/people"
	"github.com/entitlements-go/entitlements/validate"
	"golang.org/x/sync/errgroup"
)

// Repo is a loaded and validated entitlements repository: config, people, every definition
// that a run uses (parsed once), and the dependency graph between groups with references
// resolved and cycles rejected. A Repo that Load returns cannot fail to calculate.
type Repo struct {
	cfg  *config.Config
	opt  Options
	fsys vfs.FS
	// inc is the reuse plan of an incremental load (nil for a full one).
	inc    *incState
	today  validate.Date
	ignore bool
	dir    *people.Directory
	org    *people.Orgchart
	orgErr error                     // why management rules cannot work (set instead of org)
	mm     map[string]people.Manager // the manager map behind org
	// mmProblems are the manager-map entries whose manager names nobody (checkManagerMap).
	mmProblems []mmProblem
	universe   *roaring.Bitmap

	methods  map[string]bool
	filters  []*filterState
	listings map[string]*listing // by OU key
	groups   map[string]*group   // by "ouKey/cn"
	// groupSlab holds the records enumerate allocated at once and groupFor has not used.
	groupSlab []group
	// order is every usable group in dependency order (dependencies first).
	order []*group
	// outputs are the groups a run produces, in OU processing order then file order.
	outputs []*output

	leaves map[leafKey]leafResult
	// baseLeaves are an incremental base's leaves (see baseLeaf); sameDir: the base's people.
	baseLeaves map[leafKey]leafResult
	sameDir    bool
	ldap       map[string]*LDAPGroup
	warnings   []validate.Warning
	fnames     map[string]bool // configured filter names
	// noOrg: the manager map was refused when it was loaded (reported then); management
	// rules match nobody rather than report the same problem again at every rule.
	noOrg bool
	// noPeople: the people data failed to load (an error is reported); rules that need
	// people match nobody, so that the rest of the repo is still checked.
	noPeople bool
	// hints memoises the closest uid of unknown uids (see closestUID).
	hintMu    sync.Mutex
	hints     map[string]string
	hintScans int
	// peopleData and mmData are the texts of the people file and the manager map (yaml
	// sources), peopleList what was parsed from the first: a later incremental load reparses
	// only their entries that changed (see entryDocs).
	peopleData, mmData []byte
	peopleList         []people.Person
	docs               entryDocs
	// Timings of the load phases.
	Timings Timings
	// Reuse is what an incremental load took from its base (Calculate adds Groups and
	// Outputs).
	Reuse Reuse

	once      sync.Once
	result    *Result
	resultErr error
}

// Timings are the wall times of the phases of a run.
type Timings struct {
	Load, Validate, Calculate time.Duration
}

// leafKey names a rule leaf (method = value); a struct key costs no allocation per lookup.
type leafKey struct{ method, value string }

type leafResult struct {
	set *roaring.Bitmap
	err error
}

// group is one definition file in the context of one OU key.
type group struct {
	ou        *config.OU
	cn, ext   string
	path, rel string
	key       string // ouKey/cn
	regular   bool   // listed as a regular file (safefile.Options.Regular)

	def   *definition
	perrs []*validate.Error
	refs  []*rule // group references of a file that failed to parse (parser.refs)
	pwarn []validate.Warning
	// descErrs only count when the group is an output (see parser.descErrs).
	descErrs []*validate.Error

	// base is the same group of an Incremental base; reused says its definition was taken
	// from there; same says its sets equal the base's.
	base         *group
	reused, same bool
	// sum is the SHA-256 of the file's content (Digest).
	sum [32]byte

	// links is the linked state of def's rule nodes and filter entries, by their ids (made
	// when linking first writes one; read through link).
	links []link

	state      uint8 // unvisited, active, done
	bad        bool
	r, ref     *roaring.Bitmap
	finalDepOK bool
}

const (
	unvisited uint8 = iota
	active
	done
)

// output is one group of the result: a computed group of an enumerated or dummy OU, or a
// mirror copy of one.
type output struct {
	ou     *config.OU
	g      *group
	mirror bool
}

type filterState struct {
	cfg     *config.Filter
	targets []*group // MemberOfGroup
	ldapDN  string
	extra   []string // custom class population (uids)
	linked  bool
	ok      bool
	pop     *roaring.Bitmap
}

type listing struct {
	entries map[string]dirEntry   // by cn: the first file of that name
	dups    map[string][]dirEntry // cns with more than one file: all of them
	names   []string              // sorted cns (binary search for wildcard prefixes)
	// order is the cns in file-name order (os.ReadDir's), the reference's processing order:
	// "foo-bar.txt" comes before "foo.txt" although cn "foo" sorts before "foo-bar".
	order []string
	rank  map[string]int
	err   error
	// dirRel is the OU directory relative to the config's base directory (see filePaths).
	dirRel  string
	relDone bool
}

type dirEntry struct {
	name, cn, ext string
	regular       bool // the listing said: a regular file, not a symlink
}

// ErrNoPeople is the cause of the load error for a people source that yields nobody (see
// Options.AllowEmptyPeople).
var ErrNoPeople = errors.New("people source yields no people")

// Load reads the config file at path and everything a run needs, validates all of it and
// builds the dependency graph. Every problem is returned together as a validate.List.
func Load(ctx context.Context, path string, opt Options) (*Repo, error) {
	r, c, err := load(ctx, path, opt)
	if err != nil {
		return nil, err
	}
	if err := r.validate(ctx, c); err != nil {
		return nil, err
	}
	return r, nil
}

// LoadFS is Load for a repository held in fsys (an in-memory tree, a git tree, an archive):
// path is the config file's slash-separated path inside fsys, and every file the config names
// is read from fsys too. Error paths are relative to opt.WorkDir (default the root of fsys).
func LoadFS(ctx context.Context, fsys fs.FS, path string, opt Options) (*Repo, error) {
	opt.FS = fsys
	return Load(ctx, path, opt)
}

// LoadConfig loads and validates the config file at path as Load does (environment
// substitution through opt.Getenv, opt.Types, opt.FilterClasses, opt.FS and its WorkDir, the
// size cap and symlink confinement), and nothing else; its warnings go to opt.OnWarning (or
// opt.Logger). The result is what Options.Config takes.
func LoadConfig(path string, opt Options) (*config.Config, error) {
	opt = opt.withDefaults()
	cfg, warns, err := loadConfig(path, opt)
	opt.emit(warns)
	return cfg, err
}

func loadConfig(path string, opt Options) (*config.Config, []validate.Warning, error) {
	var classes []string
	for k := range opt.FilterClasses {
		classes = append(classes, k)
	}
	return config.Load(path, config.Options{Getenv: opt.Getenv, Types: opt.Types,
		FilterClasses: classes, BaseDir: opt.BaseDir, MaxFileSize: opt.MaxFileSize, FS: opt.FS, WorkDir: opt.WorkDir,
		AllowSymlinksOutside: opt.AllowSymlinksOutside})
}

func fsysOf(opt Options) vfs.FS {
	if opt.FS == nil {
		return vfs.OS{}
	}
	return vfs.Mount(opt.FS, opt.WorkDir)
}

// load is the first phase: config, people and every definition file read and parsed.
func load(ctx context.Context, path string, opt Options) (*Repo, *validate.Collector, error) {
	opt = opt.withDefaults()
	start := time.Now()
	cfg := opt.Config
	var warns []validate.Warning
	if cfg == nil {
		var err error
		if cfg, warns, err = loadConfig(path, opt); err != nil {
			opt.emit(warns)
			return nil, nil, err
		}
	}
	if opt.LDAPGroups == nil && opt.LDAPGroupsFor != nil {
		rd, err := opt.LDAPGroupsFor(cfg)
		if err != nil {
			return nil, nil, err
		}
		opt.LDAPGroups = rd
	}
	r := &Repo{cfg: cfg, opt: opt, fsys: fsysOf(opt), today: validate.Today(opt.Now), warnings: warns,
		ignore:   opt.IgnoreExpirations || cfg.IgnoreExpirations,
		listings: map[string]*listing{}, groups: map[string]*group{}, leaves: map[leafKey]leafResult{}}
	c := &validate.Collector{}
	r.registerMethods(c)
	r.setupIncremental()
	r.fnames = make(map[string]bool, len(cfg.Filters))
	for _, f := range cfg.Filters {
		r.filters = append(r.filters, &filterState{cfg: f})
		r.fnames[f.Name] = true
	}
	if err := c.Err(); err != nil {
		return nil, nil, err
	}
	// People and definitions do not depend on each other until linking: read them at once.
	var pc validate.Collector
	peopleDone := make(chan error, 1)
	go func() { peopleDone <- r.loadPeople(ctx, &pc, c) }()
	enumErr := r.enumerate(ctx, c)
	if err := <-peopleDone; err != nil {
		// Unusable people data does not stop the run: references and cycles are still
		// checked (against nobody) so that one run reports every problem of the repo.
		var list validate.List
		if !errors.As(err, &list) {
			return nil, nil, err
		}
		for _, e := range list {
			c.AddError(e)
		}
		r.noPeople = true
		r.dir, _ = people.NewDirectory(nil)
		r.universe = roaring.New()
		r.org, r.orgErr = nil, nil
	}
	if enumErr != nil {
		return nil, nil, enumErr
	}
	if !r.noPeople {
		r.reportManagerMap(c)
	}
	r.Timings.Load = time.Since(start)
	return r, c, nil
}

// validate is the second phase: LDAP groups read in bulk, references resolved, the dependency
// graph built and checked. Every error of the repo is returned together.
func (r *Repo) validate(ctx context.Context, c *validate.Collector) error {
	start := time.Now()
	if err := r.prefetchLDAP(ctx, c); err != nil {
		return err
	}
	r.reuseLeaves()
	r.link(ctx, c)
	if r.inc != nil {
		for _, g := range r.groups {
			if g.reused {
				r.Reuse.Files++
			}
		}
	}
	r.warnings = append(r.warnings, c.Warnings()...)
	r.opt.emit(r.warnings)
	r.Timings.Validate = time.Since(start)
	return c.Err()
}

// Config returns the loaded configuration.
func (r *Repo) Config() *config.Config { return r.cfg }

// People returns the interned people of the run.
func (r *Repo) People() *people.Directory { return r.dir }

// Warnings returns every warning found while loading.
func (r *Repo) Warnings() []validate.Warning { return r.warnings }

// loadPeople reads the people data and the manager map. The people data's problems go to c
// and are returned (the people are unusable); the manager map's go to org, since they only
// concern management rules.
func (r *Repo) loadPeople(ctx context.Context, c, org *validate.Collector) error {
	src := r.cfg.People[r.cfg.PeopleDataSource]
	var mmFile string
	if oc := r.cfg.Orgchart; oc != nil && oc.Err == "" {
		mmFile = oc.ManagerMapFile
	}
	if src.Type == "yaml" {
		if f, ok := src.Config.Get("filename").AsString(); ok && f != "" {
			if r.reusePeople(r.peoplePath(f), mmFile) {
				if r.cfg.Orgchart != nil && !r.inc.orgSame {
					r.loadOrgchart(org)
					r.afterPeople()
				}
				return nil
			}
		}
	}
	defer r.afterPeople()
	// The manager map is as large as the people file: parse both at once.
	type mmResult struct {
		m   map[string]people.Manager
		err error
	}
	mmDone := make(chan mmResult, 1)
	if oc := r.cfg.Orgchart; oc != nil && oc.Err == "" {
		go func() {
			m, err := r.readManagerMap(oc.ManagerMapFile)
			mmDone <- mmResult{m, err}
		}()
	}
	persons, err := r.readPeople(ctx, src, 0)
	if err != nil {
		var les people.LineErrors
		if errors.As(err, &les) {
			for _, le := range les {
				c.Add(r.peopleRel(src), le.Line, validate.KindPeople, "%s", le.Msg)
			}
		} else {
			c.AddError(&validate.Error{Path: r.cfg.Rel(r.cfg.File), Line: src.Line, Kind: validate.KindPeople,
				Msg: fmt.Sprintf("people source %q: %v", src.Name, err), Err: err})
		}
		return c.Err()
	}
	if len(persons) == 0 && src.Type != "dummy" && !r.opt.AllowEmptyPeople {
		c.AddError(&validate.Error{Path: r.cfg.Rel(r.cfg.File), Line: src.Line, Kind: validate.KindPeople,
			Msg: fmt.Sprintf("people source %q yields no people; refusing to calculate, since every group would lose every member (allow an empty source explicitly if this is intended)", src.Name),
			Err: ErrNoPeople})
		return c.Err()
	}
	dir, err := people.NewDirectory(persons)
	if err != nil {
		c.AddError(&validate.Error{Path: r.peopleRel(src), Kind: validate.KindPeople, Msg: err.Error(), Err: err})
		return c.Err()
	}
	r.dir = dir
	r.universe = roaring.New()
	r.universe.AddRange(0, uint64(dir.Len()))
	if oc := r.cfg.Orgchart; oc != nil {
		var mm mmResult
		if oc.Err == "" {
			mm = <-mmDone
		}
		r.setOrgchart(mm.m, mm.err, org)
	}
	return nil
}

func (r *Repo) readManagerMap(path string) (map[string]people.Manager, error) {
	data, err := r.fsys.ReadFile(path, r.confined(filepath.Dir(path)))
	if err != nil {
		return nil, fmt.Errorf("manager map: %w", err)
	}
	r.mmData = data
	if m, ok := r.managerMapFromBase(data); ok {
		return m, nil
	}
	return people.ParseManagerMap(path, data)
}

// loadOrgchart reads the manager map for people already loaded.
func (r *Repo) loadOrgchart(c *validate.Collector) {
	oc := r.cfg.Orgchart
	if oc.Err != "" {
		r.setOrgchart(nil, nil, c)
		return
	}
	m, err := r.readManagerMap(oc.ManagerMapFile)
	r.setOrgchart(m, err, c)
}

// setOrgchart builds the org chart. A manager map that cannot be read or parsed only fails
// the rules that need it (orgErr), as in the reference; values of the wrong type are refused
// at load, each at its line (issue 23).
func (r *Repo) setOrgchart(m map[string]people.Manager, err error, c *validate.Collector) {
	oc := r.cfg.Orgchart
	var les people.LineErrors
	switch {
	case oc.Err != "":
		r.orgErr = fmt.Errorf("%s: %w", oc.Err, people.ErrManagerMap)
	case errors.As(err, &les):
		for _, le := range les {
			c.Add(r.cfg.Rel(oc.ManagerMapFile), le.Line, validate.KindPeople, "%s", le.Msg)
		}
		r.noOrg = true
	case err != nil:
		r.orgErr = fmt.Errorf("%v: %w", err, people.ErrManagerMap)
	default:
		r.org, r.mm = people.NewOrgchart(r.dir, m), m
		r.checkManagerMap()
	}
}

func (r *Repo) peopleRel(src *config.PeopleSource) string {
	if f, ok := src.Config.Get("filename").AsString(); ok {
		return r.cfg.Rel(r.peoplePath(f))
	}
	return r.cfg.Rel(r.cfg.File)
}

// peoplePath resolves a people file name: relative to the working directory, as in the
// reference; when no such file exists there, relative to the config file's directory
// (an extension: it lets a repo run from anywhere and changes nothing for configs that work
// today). Absolute paths are used as written.
func (r *Repo) peoplePath(name string) string {
	if filepath.IsAbs(name) {
		return name
	}
	abs, err := vfs.Abs(r.fsys, name)
	if err != nil {
		return name
	}
	if _, err := r.fsys.Stat(abs); err != nil {
		if alt := filepath.Join(r.cfg.Dir, name); r.fileExists(alt) {
			return alt
		}
	}
	return abs
}

func (r *Repo) fileExists(p string) bool {
	st, err := r.fsys.Stat(p)
	return err == nil && !st.IsDir()
}

func (r *Repo) readPeople(ctx context.Context, src *config.PeopleSource, depth int) ([]people.Person, error) {
	if depth > 8 {
		return nil, fmt.Errorf("combined people sources nest too deeply")
	}
	switch src.Type {
	case "yaml":
		f, ok := src.Config.Get("filename").AsString()
		if !ok || f == "" {
			return nil, fmt.Errorf("a yaml people source needs config.filename")
		}
		path := r.peoplePath(f)
		r.opt.Logger.Debug("reading people", "source", src.Name, "path", path)
		data, err := r.fsys.ReadFile(path, r.confined(filepath.Dir(path)))
		if err != nil {
			return nil, fmt.Errorf("people file: %w", err)
		}
		if depth == 0 {
			r.peopleData = data
		}
		if ps, ok := r.peopleFromBase(data); ok {
			if depth == 0 {
				r.peopleList = ps
			}
			return ps, nil
		}
		ps, err := people.ParseYAML(data)
		if depth == 0 {
			r.peopleList = ps
		}
		return ps, err
	case "dummy":
		return nil, nil
	case "combined":
		return r.readCombined(ctx, src, depth)
	}
	if r.opt.People == nil {
		return nil, fmt.Errorf("people source type %q needs a people loader (for example the LDAP provider); only yaml sources can be read offline", src.Type)
	}
	return r.opt.People(ctx, src)
}

// readCombined merges component sources with `or` (union) or `and` (intersection); the first
// component that has a uid supplies the person. uids match case-insensitively.
func (r *Repo) readCombined(ctx context.Context, src *config.PeopleSource, depth int) ([]people.Person, error) {
	o := src.Config.Get("operator")
	if o.IsNull() {
		return nil, fmt.Errorf("combined people source needs an operator (\"and\" or \"or\")")
	}
	op := o.Text()
	if op != "and" {
		// The reference treats every operator but "and" as "or" during a run.
		op = "or"
	}
	comps := src.Config.Get("components")
	if !comps.IsList() && !comps.IsNull() {
		return nil, fmt.Errorf("combined people source: components must be a list")
	}
	if len(comps.Items()) == 0 {
		return nil, nil
	}
	var merged []people.Person
	index := map[string]int{}
	count := map[string]int{}
	for i, it := range comps.Items() {
		var sub *config.PeopleSource
		if name, ok := it.AsString(); ok {
			sub = r.cfg.People[name]
			if sub == nil {
				return nil, fmt.Errorf("combined people source: component %q is not a configured people source", name)
			}
		} else {
			t := it.Get("type")
			if !t.Exists() {
				return nil, fmt.Errorf("combined people source: component %d has no type", i+1)
			}
			sub = &config.PeopleSource{Name: fmt.Sprintf("%s[%d]", src.Name, i), Type: t.Text(), Config: it.Get("config"), Line: it.Line()}
		}
		ps, err := r.readPeople(ctx, sub, depth+1)
		if err != nil {
			return nil, fmt.Errorf("component %s: %w", sub.Name, err)
		}
		seen := map[string]bool{}
		for _, p := range ps {
			k := strings.ToLower(p.UID)
			if seen[k] {
				continue
			}
			seen[k] = true
			count[k]++
			if _, ok := index[k]; !ok {
				index[k] = len(merged)
				merged = append(merged, p)
			}
		}
	}
	if op == "and" {
		n := len(comps.Items())
		merged = slices.DeleteFunc(merged, func(p people.Person) bool { return count[strings.ToLower(p.UID)] < n })
	}
	return merged, nil
}

var builtinMethods = []string{"username", "group"}

// reservedNames cannot be custom rule methods: built-in methods, aliases, operators and the
// reserved keys of .txt files.
var reservedNames = []string{"username", "group", "entitlements_group", "management", "direct_report",
	"ldap_group", "description", "expiration", "always", "or", "and", "not", "contractor"}

func validMethodName(s string) bool { return validCN(s) }

func (r *Repo) registerMethods(c *validate.Collector) {
	r.methods = map[string]bool{}
	for _, m := range builtinMethods {
		r.methods[m] = true
	}
	if r.cfg.Orgchart != nil {
		r.methods["management"] = true
		r.methods["direct_report"] = true
	}
	if r.cfg.LDAPGroup.Exists() {
		r.methods["ldap_group"] = true
	}
	for name := range r.opt.Methods {
		switch {
		case slices.Contains(reservedNames, name) || strings.HasPrefix(name, "metadata_") ||
			strings.HasPrefix(name, "filter_") || strings.HasPrefix(name, "modifier_"):
			c.Add("", 0, validate.KindConfig, "custom rule method %q would replace a built-in or reserved name", name)
		case slices.ContainsFunc(r.cfg.Filters, func(f *config.Filter) bool { return f.Name == name }):
			c.Add("", 0, validate.KindConfig, "custom rule method %q has the name of a configured filter; .txt lines %q would set the filter", name, name)
		case !validMethodName(name):
			c.Add("", 0, validate.KindConfig, "custom rule method %q: names are letters, digits, _ and -", name)
		default:
			r.methods[name] = true
		}
	}
	for class := range r.opt.FilterClasses {
		if _, builtin := config.BuiltinFilterClass(class); builtin {
			c.Add("", 0, validate.KindConfig, "custom filter class %q would replace a built-in filter class", class)
		}
	}
}

func (r *Repo) allowedMethods(ou *config.OU) map[string]bool {
	if ou.AllowedMethods == nil {
		return nil
	}
	out := map[string]bool{}
	for _, m := range ou.AllowedMethods {
		if r.methods[m] {
			out[m] = true
		}
	}
	return out
}

// listOU reads an OU directory once. Enumerated OUs apply the enumeration rules (spec 3.2) and
// report illegal files; other OUs only collect candidate files for references.
func (r *Repo) listOU(ou *config.OU, enumerate bool, c *validate.Collector) *listing {
	if l, ok := r.listings[ou.Key]; ok {
		return l
	}
	l := &listing{entries: map[string]dirEntry{}}
	r.listings[ou.Key] = l
	if ou.Mirror != "" {
		l.err = fmt.Errorf("OU %q is a mirror and has no group files of its own", ou.Key)
		return l
	}
	ents, err := r.fsys.ReadDir(ou.Dir)
	if err != nil {
		l.err = fmt.Errorf("Non-existing directory %q for group %q", r.cfg.Rel(ou.Dir), ou.Key)
		return l
	}
	l.entries = make(map[string]dirEntry, len(ents))
	l.names = make([]string, 0, len(ents))
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, ".") || e.IsDir() {
			continue
		}
		if !e.Type().IsRegular() {
			st, err := r.fsys.Stat(filepath.Join(ou.Dir, name))
			if err != nil && enumerate {
				// A dangling link in a managed OU: the reference fails reading it too.
				c.Add(r.cfg.Rel(filepath.Join(ou.Dir, name)), 0, validate.KindIO, "cannot read %s: %v", name, err)
				continue
			}
			if err != nil || st.IsDir() {
				continue
			}
		}
		if enumerate && (name == "README.md" || name == "PR_TEMPLATE.md") {
			continue
		}
		cn, ext := splitName(name)
		if !validCN(cn) {
			if enumerate {
				c.Add(r.cfg.Rel(filepath.Join(ou.Dir, name)), 0, validate.KindFileType, "Illegal LDAP group name %q in %s! (names are [A-Za-z0-9_-])", cn, ou.Key)
			}
			continue // references use the same name rules
		}
		switch ext {
		case "txt", "yaml", "rb":
		case "":
			if enumerate {
				c.Add(r.cfg.Rel(filepath.Join(ou.Dir, name)), 0, validate.KindFileType, "Unable to determine the extension on %q!", name)
			}
			continue
		default:
			if enumerate {
				c.Add(r.cfg.Rel(filepath.Join(ou.Dir, name)), 0, validate.KindFileType, "Unable to map filename %q to a ruleset object! (group files are .txt or .yaml)", name)
			}
			continue
		}
		de := dirEntry{name: name, cn: cn, ext: ext, regular: e.Type().IsRegular()}
		if first, ok := l.entries[cn]; !ok {
			l.names = append(l.names, cn)
			l.entries[cn] = de
		} else {
			if l.dups == nil {
				l.dups = map[string][]dirEntry{}
			}
			if len(l.dups[cn]) == 0 {
				l.dups[cn] = []dirEntry{first}
			}
			l.dups[cn] = append(l.dups[cn], de)
		}
	}
	l.order = slices.Clone(l.names)
	l.rank = make(map[string]int, len(l.order))
	for i, cn := range l.order {
		l.rank[cn] = i
	}
	slices.Sort(l.names)
	return l
}

// splitName removes a trailing ".<word chars>" extension.
func splitName(name string) (cn, ext string) {
	i := strings.LastIndexByte(name, '.')
	if i < 0 || i == len(name)-1 {
		return name, ""
	}
	for j := i + 1; j < len(name); j++ {
		if !isWord(name[j]) {
			return name, ""
		}
	}
	return name[:i], name[i+1:]
}

func validCN(cn string) bool {
	if cn == "" {
		return false
	}
	for i := 0; i < len(cn); i++ {
		if !isWord(cn[i]) && cn[i] != '-' {
			return false
		}
	}
	return true
}

// groupFor returns the group record for a cn of an OU listing, creating it (unparsed) once.
func (r *Repo) groupFor(ou *config.OU, l *listing, cn string) *group {
	if g, ok := r.groups[ou.Key+"/"+cn]; ok { // no allocation for a short key
		return g
	}
	key := ou.Key + "/" + cn
	e := l.entries[cn]
	ents := l.dups[cn]
	path, rel := l.filePaths(ou.Dir, e.name, r.cfg.Rel)
	var g *group
	if len(r.groupSlab) > 0 {
		g, r.groupSlab = &r.groupSlab[0], r.groupSlab[1:]
	} else {
		g = new(group)
	}
	*g = group{ou: ou, cn: cn, ext: e.ext, path: path, rel: rel, key: key, regular: e.regular}
	if ents != nil { // more than one file of that cn
		var names []string
		for _, x := range ents {
			names = append(names, r.cfg.Rel(filepath.Join(ou.Dir, x.name)))
		}
		g.perrs = append(g.perrs, &validate.Error{Path: g.rel, Kind: validate.KindDuplicateGroup,
			Msg: fmt.Sprintf("duplicate group %s: %s (one file per group name)", key, strings.Join(names, ", "))})
	}
	r.groups[key] = g
	return g
}

// filePaths returns filepath.Join(dir, name) for a clean dir and a plain file name, and
// relTo of it, computing relTo of the directory once per listing: filepath.Rel per file was a
// visible share of loading 60,000 group files.
func (l *listing) filePaths(dir, name string, relTo func(string) string) (path, rel string) {
	sep := string(filepath.Separator)
	if strings.HasSuffix(dir, sep) {
		path = dir + name
	} else {
		path = dir + sep + name
	}
	if !l.relDone {
		l.dirRel, l.relDone = relTo(dir), true
	}
	switch l.dirRel {
	case dir: // not under the base directory (or no base): whatever relTo makes of the path
		return path, relTo(path)
	case ".":
		return path, name
	}
	return path, l.dirRel + sep + name
}

// enumerate lists every OU directory, creates the group records of enumerated and dummy OUs
// and parses them all in parallel. Only records that are needed are validated later (link).
func (r *Repo) enumerate(ctx context.Context, c *validate.Collector) error {
	type listed struct {
		ou *config.OU
		l  *listing
	}
	var lists []listed
	total := 0
	for _, ou := range r.cfg.SortedOUs() {
		if ou.Mirror != "" || ou.Spec.Derived {
			continue
		}
		if !ou.Spec.Enumerates {
			if st, err := r.fsys.Stat(ou.Dir); err != nil || !st.IsDir() {
				continue // a dummy OU without a directory is skipped
			}
		}
		l := r.listOU(ou, ou.Spec.Enumerates, c)
		if l.err != nil {
			if ou.Spec.Enumerates {
				c.Add(r.cfg.Rel(r.cfg.File), ou.Line, validate.KindConfig, "%v", l.err)
			}
			continue
		}
		lists = append(lists, listed{ou, l})
		total += len(l.order)
	}
	// Every group record of the run in one allocation, and a map that never rehashes while
	// they are added (references to other OUs add a few more later).
	r.groupSlab = make([]group, total)
	r.groups = make(map[string]*group, total+total/8)
	toParse := make([]*group, 0, total)
	r.outputs = make([]*output, 0, total)
	outs := make([]output, total)
	for _, x := range lists {
		ou, l := x.ou, x.l
		for _, cn := range l.order {
			g := r.groupFor(ou, l, cn)
			toParse = append(toParse, g)
			o := &outs[len(r.outputs)]
			*o = output{ou: ou, g: g}
			r.outputs = append(r.outputs, o)
		}
	}
	// Enumeration errors do not stop here: parsing and linking go on so that one run reports
	// every problem of the repo.
	return r.parseAll(ctx, toParse)
}

// readAheader is a file system that can fetch files ahead of the reads (a git tree streams
// them out of one process): told the order of the reads, it has each file ready when a
// parser asks for it.
type readAheader interface{ ReadAhead(names []string) }

func (r *Repo) parseAll(ctx context.Context, gs []*group) error {
	if ra, ok := r.opt.FS.(readAheader); ok && (r.inc == nil || !r.inc.parse) {
		names := make([]string, 0, len(gs))
		for _, g := range gs {
			if g.ext != "rb" && len(g.perrs) == 0 {
				names = append(names, r.fsys.Rel(g.path))
			}
		}
		ra.ReadAhead(names)
	}
	eg, ctx := errgroup.WithContext(ctx)
	eg.SetLimit(r.opt.Parallelism)
	const batch = 64
	for i := 0; i < len(gs); i += batch {
		part := gs[i:min(i+batch, len(gs))]
		eg.Go(func() error {
			var scratch parseScratch
			for _, g := range part {
				if err := ctx.Err(); err != nil {
					return err
				}
				r.parseWith(g, &scratch)
			}
			return nil
		})
	}
	return eg.Wait()
}

// parse reads and parses one group file into g (errors stay with g).
func (r *Repo) parse(g *group) { r.parseWith(g, nil) }

// parseWith is parse with storage the caller reuses from file to file (nil: none).
func (r *Repo) parseWith(g *group, scratch *parseScratch) {
	if g.def != nil || len(g.perrs) > 0 || r.reuseParse(g) {
		return
	}
	if g.ou.FileErr != "" {
		g.perrs = append(g.perrs, &validate.Error{Path: g.rel, Kind: validate.KindConfig, Msg: g.ou.FileErr})
		return
	}
	if at := g.ou.AllowedTypes; at != nil && !slices.Contains(at, g.ext) {
		g.perrs = append(g.perrs, &validate.Error{Path: g.rel, Kind: validate.KindFileType,
			Msg: fmt.Sprintf("Files with extension %q are not allowed in this OU! Allowed: %s!", g.ext, strings.Join(at, ","))})
		return
	}
	if g.ext == "rb" {
		g.perrs = append(g.perrs, &validate.Error{Path: g.rel, Kind: validate.KindUnsupported,
			Msg: "unsupported group file: Ruby rule files cannot be evaluated; convert it to .yaml or .txt, or register a Go rule method through calc.Options.Methods"})
		return
	}
	data, err := r.readGroupFile(g)
	if err != nil {
		g.perrs = append(g.perrs, &validate.Error{Path: g.rel, Kind: validate.KindIO, Msg: safefile.Reason(err), Err: err})
		return
	}
	g.sum = sha256.Sum256(data)
	p := &parser{rel: g.rel, today: r.today, ignoreExp: r.ignore, methods: r.methods,
		allowed: r.allowedMethods(g.ou), filters: r.fnames, ownsData: true, scratch: scratch}
	var def *definition
	if g.ext == "txt" {
		def = p.parseTxt(data)
	} else {
		def = p.parseYAML(data)
	}
	g.pwarn = p.warns
	g.descErrs = p.descErrs
	if len(p.errs) > 0 || def == nil {
		g.perrs = append(g.perrs, p.errs...)
		g.refs = p.refs
		return
	}
	def.expired = p.expired
	def.number()
	g.def = def
}

// readGroupFile reads one group file (see confined).
func (r *Repo) readGroupFile(g *group) ([]byte, error) {
	o := r.confined(g.ou.Dir)
	o.Regular = g.regular
	return r.fsys.ReadFile(g.path, o)
}

// confined is how every file of the repository is read (group files, people data, manager
// map): a regular file within the size cap that, unless Options.AllowSymlinksOutside,
// resolves inside the config tree (the configuration_path, the config file's directory) or
// the directory dir it is named in, so that a link cannot make the run read (and quote) a
// file elsewhere on the machine.
func (r *Repo) confined(dir string) safefile.Options {
	o := safefile.Options{MaxSize: r.opt.MaxFileSize}
	if !r.opt.AllowSymlinksOutside {
		o.Roots = []string{r.cfg.ConfigurationPath, r.cfg.Dir, dir}
	}
	return o
}
