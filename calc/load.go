package calc

import (
	"context"
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/internal/safefile"
	"github.com/entitlements-go/entitlements/internal/vfs"
	"github.com/entitlements-go/entitlements/people"
	"github.com/entitlements-go/entitlements/validate"
	"golang.org/x/sync/errgroup"
)

// loader reads the repository: the config's inputs, the people data and the manager map
// (loadpeople.go, managermap.go), the OU directories and every group file, parsed once. It
// is the first phase of a run (Load's load); afterwards it is only read: the linker resolves
// references against its listings and groups, the evaluator computes sets over its people.
type loader struct {
	cfg    *config.Config
	opt    Options
	fsys   vfs.FS
	today  validate.Date
	ignore bool // expirations are ignored (Options.IgnoreExpirations or the config's)
	// inc is the reuse plan of an incremental load (nil for a full one): people, manager
	// map and group files that did not change are taken from its base.
	inc *incState
	// methods are the rule methods a file may use; fnames the configured filter names.
	methods map[string]bool
	fnames  map[string]bool

	// The people of the run.
	dir      *people.Directory
	universe *roaring.Bitmap // every person's id
	org      *people.Orgchart
	orgErr   error                     // why management rules cannot work (set instead of org)
	mm       map[string]people.Manager // the manager map behind org
	// mmProblems are the manager-map entries whose manager names nobody (checkManagerMap).
	mmProblems []mmProblem
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
	// only their entries that changed (docs, see entryDocs).
	peopleData, mmData []byte
	peopleList         []people.Person
	docs               entryDocs

	// The group files.
	listings map[string]*listing // by OU key
	groups   map[string]*group   // by "ouKey/cn"
	// groupSlab holds the records enumerate allocated at once and groupFor has not used.
	groupSlab []group
	// enumerated are the groups of enumerated and dummy OUs, in OU processing order then
	// file order: the candidate outputs, which the linker prunes and completes with mirrors.
	enumerated []*output
}

// group is one definition file in the context of one OU key. The record is shared by the
// phases of a run; each writes its own fields.
type group struct {
	// The loader's: the file, and its definition or the problems that stop it parsing.
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
	// sum is the SHA-256 of the file's content (Digest).
	sum [32]byte

	// The incremental state's: base is the same group of an Incremental base; reused says
	// its definition was taken from there; same says its sets equal the base's.
	base         *group
	reused, same bool

	// The linker's: links is the linked state of def's rule nodes and filter entries, by
	// their ids (made when linking first writes one; read through link); state is the
	// group's place in the depth-first walk; bad says it cannot be calculated.
	links      []link
	state      uint8 // unvisited, active, done
	bad        bool
	finalDepOK bool // what its filtered view needs is linked (linker.final)

	// The evaluator's: the members by the rules (r), and as references see them (ref: after
	// the whole-file expiration).
	r, ref *roaring.Bitmap
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

var builtinMethods = []string{"username", "group"}

// reservedNames cannot be custom rule methods: built-in methods, aliases, operators and the
// reserved keys of .txt files.
var reservedNames = []string{"username", "group", "entitlements_group", "management", "direct_report",
	"ldap_group", "description", "expiration", "always", "or", "and", "not", "contractor"}

func validMethodName(s string) bool { return validCN(s) }

func (ld *loader) registerMethods(c *validate.Collector) {
	ld.methods = map[string]bool{}
	for _, m := range builtinMethods {
		ld.methods[m] = true
	}
	if ld.cfg.Orgchart != nil {
		ld.methods["management"] = true
		ld.methods["direct_report"] = true
	}
	if ld.cfg.LDAPGroup.Exists() {
		ld.methods["ldap_group"] = true
	}
	for name := range ld.opt.Methods {
		switch {
		case slices.Contains(reservedNames, name) || strings.HasPrefix(name, "metadata_") ||
			strings.HasPrefix(name, "filter_") || strings.HasPrefix(name, "modifier_"):
			c.Add("", 0, validate.KindConfig, "custom rule method %q would replace a built-in or reserved name", name)
		case slices.ContainsFunc(ld.cfg.Filters, func(f *config.Filter) bool { return f.Name == name }):
			c.Add("", 0, validate.KindConfig, "custom rule method %q has the name of a configured filter; .txt lines %q would set the filter", name, name)
		case !validMethodName(name):
			c.Add("", 0, validate.KindConfig, "custom rule method %q: names are letters, digits, _ and -", name)
		default:
			ld.methods[name] = true
		}
	}
	for class := range ld.opt.FilterClasses {
		if _, builtin := config.BuiltinFilterClass(class); builtin {
			c.Add("", 0, validate.KindConfig, "custom filter class %q would replace a built-in filter class", class)
		}
	}
}

func (ld *loader) allowedMethods(ou *config.OU) map[string]bool {
	if ou.AllowedMethods == nil {
		return nil
	}
	out := map[string]bool{}
	for _, m := range ou.AllowedMethods {
		if ld.methods[m] {
			out[m] = true
		}
	}
	return out
}

// listOU reads an OU directory once. Enumerated OUs apply the enumeration rules (spec 3.2) and
// report illegal files; other OUs only collect candidate files for references.
func (ld *loader) listOU(ou *config.OU, enumerate bool, c *validate.Collector) *listing {
	if l, ok := ld.listings[ou.Key]; ok {
		return l
	}
	l := &listing{entries: map[string]dirEntry{}}
	ld.listings[ou.Key] = l
	if ou.Mirror != "" {
		l.err = fmt.Errorf("OU %q is a mirror and has no group files of its own", ou.Key)
		return l
	}
	ents, err := ld.fsys.ReadDir(ou.Dir)
	if err != nil {
		l.err = fmt.Errorf("Non-existing directory %q for group %q", ld.cfg.Rel(ou.Dir), ou.Key)
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
			st, err := ld.fsys.Stat(filepath.Join(ou.Dir, name))
			if err != nil && enumerate {
				// A dangling link in a managed OU: the reference fails reading it too.
				c.Add(ld.cfg.Rel(filepath.Join(ou.Dir, name)), 0, validate.KindIO, "cannot read %s: %v", name, err)
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
				c.Add(ld.cfg.Rel(filepath.Join(ou.Dir, name)), 0, validate.KindFileType, "Illegal LDAP group name %q in %s! (names are [A-Za-z0-9_-])", cn, ou.Key)
			}
			continue // references use the same name rules
		}
		switch ext {
		case "txt", "yaml", "rb":
		case "":
			if enumerate {
				c.Add(ld.cfg.Rel(filepath.Join(ou.Dir, name)), 0, validate.KindFileType, "Unable to determine the extension on %q!", name)
			}
			continue
		default:
			if enumerate {
				c.Add(ld.cfg.Rel(filepath.Join(ou.Dir, name)), 0, validate.KindFileType, "Unable to map filename %q to a ruleset object! (group files are .txt or .yaml)", name)
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
func (ld *loader) groupFor(ou *config.OU, l *listing, cn string) *group {
	if g, ok := ld.groups[ou.Key+"/"+cn]; ok { // no allocation for a short key
		return g
	}
	key := ou.Key + "/" + cn
	e := l.entries[cn]
	ents := l.dups[cn]
	path, rel := l.filePaths(ou.Dir, e.name, ld.cfg.Rel)
	var g *group
	if len(ld.groupSlab) > 0 {
		g, ld.groupSlab = &ld.groupSlab[0], ld.groupSlab[1:]
	} else {
		g = new(group)
	}
	*g = group{ou: ou, cn: cn, ext: e.ext, path: path, rel: rel, key: key, regular: e.regular}
	if ents != nil { // more than one file of that cn
		var names []string
		for _, x := range ents {
			names = append(names, ld.cfg.Rel(filepath.Join(ou.Dir, x.name)))
		}
		g.perrs = append(g.perrs, &validate.Error{Path: g.rel, Kind: validate.KindDuplicateGroup,
			Msg: fmt.Sprintf("duplicate group %s: %s (one file per group name)", key, strings.Join(names, ", "))})
	}
	ld.groups[key] = g
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
func (ld *loader) enumerate(ctx context.Context, c *validate.Collector) error {
	type listed struct {
		ou *config.OU
		l  *listing
	}
	var lists []listed
	total := 0
	for _, ou := range ld.cfg.SortedOUs() {
		if ou.Mirror != "" || ou.Spec.Derived {
			continue
		}
		if !ou.Spec.Enumerates {
			if st, err := ld.fsys.Stat(ou.Dir); err != nil || !st.IsDir() {
				continue // a dummy OU without a directory is skipped
			}
		}
		l := ld.listOU(ou, ou.Spec.Enumerates, c)
		if l.err != nil {
			if ou.Spec.Enumerates {
				c.Add(ld.cfg.Rel(ld.cfg.File), ou.Line, validate.KindConfig, "%v", l.err)
			}
			continue
		}
		lists = append(lists, listed{ou, l})
		total += len(l.order)
	}
	// Every group record of the run in one allocation, and a map that never rehashes while
	// they are added (references to other OUs add a few more later).
	ld.groupSlab = make([]group, total)
	ld.groups = make(map[string]*group, total+total/8)
	toParse := make([]*group, 0, total)
	ld.enumerated = make([]*output, 0, total)
	outs := make([]output, total)
	for _, x := range lists {
		ou, l := x.ou, x.l
		for _, cn := range l.order {
			g := ld.groupFor(ou, l, cn)
			toParse = append(toParse, g)
			o := &outs[len(ld.enumerated)]
			*o = output{ou: ou, g: g}
			ld.enumerated = append(ld.enumerated, o)
		}
	}
	// Enumeration errors do not stop here: parsing and linking go on so that one run reports
	// every problem of the repo.
	return ld.parseAll(ctx, toParse)
}

// readAheader is a file system that can fetch files ahead of the reads (a git tree streams
// them out of one process): told the order of the reads, it has each file ready when a
// parser asks for it.
type readAheader interface{ ReadAhead(names []string) }

func (ld *loader) parseAll(ctx context.Context, gs []*group) error {
	if ra, ok := ld.opt.FS.(readAheader); ok && (ld.inc == nil || !ld.inc.parse) {
		names := make([]string, 0, len(gs))
		for _, g := range gs {
			if g.ext != "rb" && len(g.perrs) == 0 {
				names = append(names, ld.fsys.Rel(g.path))
			}
		}
		ra.ReadAhead(names)
	}
	eg, ctx := errgroup.WithContext(ctx)
	eg.SetLimit(ld.opt.Parallelism)
	const batch = 64
	for i := 0; i < len(gs); i += batch {
		part := gs[i:min(i+batch, len(gs))]
		eg.Go(func() error {
			var scratch parseScratch
			for _, g := range part {
				if err := ctx.Err(); err != nil {
					return err
				}
				ld.parseWith(g, &scratch)
			}
			return nil
		})
	}
	return eg.Wait()
}

// parse reads and parses one group file into g (errors stay with g).
func (ld *loader) parse(g *group) { ld.parseWith(g, nil) }

// parseWith is parse with storage the caller reuses from file to file (nil: none).
func (ld *loader) parseWith(g *group, scratch *parseScratch) {
	if g.def != nil || len(g.perrs) > 0 || ld.inc.reuseParse(g) {
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
	data, err := ld.readGroupFile(g)
	if err != nil {
		g.perrs = append(g.perrs, &validate.Error{Path: g.rel, Kind: validate.KindIO, Msg: safefile.Reason(err), Err: err})
		return
	}
	g.sum = sha256.Sum256(data)
	p := &parser{rel: g.rel, today: ld.today, ignoreExp: ld.ignore, methods: ld.methods,
		allowed: ld.allowedMethods(g.ou), filters: ld.fnames, ownsData: true, scratch: scratch}
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
func (ld *loader) readGroupFile(g *group) ([]byte, error) {
	o := ld.confined(g.ou.Dir)
	o.Regular = g.regular
	return ld.fsys.ReadFile(g.path, o)
}

// confined is how every file of the repository is read (group files, people data, manager
// map): a regular file within the size cap that, unless Options.AllowSymlinksOutside,
// resolves inside the config tree (the configuration_path, the config file's directory) or
// the directory dir it is named in, so that a link cannot make the run read (and quote) a
// file elsewhere on the machine.
func (ld *loader) confined(dir string) safefile.Options {
	o := safefile.Options{MaxSize: ld.opt.MaxFileSize}
	if !ld.opt.AllowSymlinksOutside {
		o.Roots = []string{ld.cfg.ConfigurationPath, ld.cfg.Dir, dir}
	}
	return o
}
