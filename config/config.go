// Package config loads and validates an entitlements configuration file (entitlements.yaml):
// environment substitution, YAML 1.1 parsing, backend presets merged into OU entries, per-type
// key checks, filters, extras and people sources. Every problem is reported at once as
// `path:line: message`; a *Config that is returned is valid and never checked again.
//
// The keys that providers, filters, people sources and auditors read for themselves are
// kept as Values (OU.Settings, Filter.Config, ...), typed as the reference's YAML loader
// types them.
package config

import (
	"cmp"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/entitlements-go/entitlements/internal/dn"
	"github.com/entitlements-go/entitlements/internal/erb"
	"github.com/entitlements-go/entitlements/internal/safefile"
	"github.com/entitlements-go/entitlements/internal/suggest"
	"github.com/entitlements-go/entitlements/internal/textsafe"
	"github.com/entitlements-go/entitlements/internal/vfs"
	"github.com/entitlements-go/entitlements/internal/yaml11"
	"github.com/entitlements-go/entitlements/validate"
)

// Built-in filter classes, by the Ruby class names that existing configs use.
const (
	FilterMemberOfGroup     = "MemberOfGroup"
	FilterMemberOfLDAPGroup = "MemberOfLDAPGroup"
)

// filterClasses accepts the short class names too: an extension (issue 23), since the
// reference resolves `class:` as a Ruby constant and fails on them.
var filterClasses = map[string]string{
	"Entitlements::Data::Groups::Calculated::Filters::MemberOfGroup": FilterMemberOfGroup,
	"MemberOfGroup": FilterMemberOfGroup,
	"Entitlements::Extras::LDAPGroup::Filters::MemberOfLDAPGroup": FilterMemberOfLDAPGroup,
	"MemberOfLDAPGroup": FilterMemberOfLDAPGroup,
}

// BuiltinFilterClass maps a `class:` value to a built-in filter class, if it is one.
func BuiltinFilterClass(class string) (string, bool) {
	c, ok := filterClasses[class]
	return c, ok
}

// Options tune loading. The zero value is the documented default.
type Options struct {
	// Getenv serves environment substitution. Default: os.LookupEnv.
	Getenv func(string) (string, bool)
	// Types are the backend types OU entries may use (a later spec of the same name wins).
	// Default: none, and every OU entry is refused; package backends has the built-in ones.
	Types []TypeSpec
	// FilterClasses names extra filter classes that an embedder implements in Go; configs may
	// then use them as `class:` values.
	FilterClasses []string
	// BaseDir is the directory error paths are shown relative to. Default: the working directory.
	BaseDir string
	// MaxFileSize caps the config file's size in bytes. Default 0: 64 MiB; negative: no cap.
	MaxFileSize int64
	// FS, when set, is where every file is read from instead of the operating system: paths
	// are then slash-separated and relative to its root, mounted at "/" (Config.File is
	// "/entitlements.yaml" for a file at the root). Default: the operating system.
	FS fs.FS
	// WorkDir is the working directory inside FS (relative paths, error paths). Default: its root.
	WorkDir string
	// AllowSymlinksOutside lets the config file be a symlink that resolves outside the
	// directory it is named in. Default false: refused (validate.ErrOutsideTree), as the
	// loaders refuse group, people and manager-map files that lead out of the config tree.
	AllowSymlinksOutside bool
}

func (o Options) fsys() vfs.FS {
	if o.FS == nil {
		return vfs.OS{}
	}
	return vfs.Mount(o.FS, o.WorkDir)
}

// Config is a loaded, validated configuration.
type Config struct {
	File string // absolute path of the config file
	Dir  string // its directory
	// ConfigurationPath is the absolute root of the group definition tree.
	ConfigurationPath string
	// OUs in the order of the config file.
	OUs []*OU
	// People sources by name, and the selected one.
	People           map[string]*PeopleSource
	PeopleDataSource string
	// Filters in config order (registration order).
	Filters []*Filter
	// Orgchart is set when the orgchart extra is configured.
	Orgchart *Orgchart
	// LDAPGroup holds the settings of the ldap_group extra (its LDAP connection); it does
	// not Exist when the extra is not configured.
	LDAPGroup Value
	// MaxParallelism from the config (default 1; the Go engine uses it as a hint only).
	MaxParallelism int
	// IgnoreExpirations is the config's ignore_expirations (an extension of the reference's
	// keys): nothing is treated as expired.
	IgnoreExpirations bool
	// Auditors are the `auditors:` entries (maps), in config order.
	Auditors []Value

	baseDir string
	byKey   map[string]*OU
}

// OU is one entry of `groups:` after the backend preset was merged in.
type OU struct {
	Key      string
	Type     string
	Spec     TypeSpec
	Line     int
	Base     string // "" when the OU has none
	Mirror   string // source OU key for a mirror OU
	DirGiven bool
	// Dir is the absolute OU directory (CP/key, or `dir` resolved against CP).
	Dir string
	// AllowedMethods / AllowedTypes are nil when the OU does not restrict them.
	AllowedMethods []string
	AllowedTypes   []string
	// Settings is the OU's map (its backend preset merged under it, type and backend
	// removed), from which providers read their own keys.
	Settings Value
	// Order is the position in the config file, used to break sort ties deterministically.
	Order int
	// FileErr, when set, fails every file of the OU that a run uses (an untyped OU whose
	// restrictions are malformed).
	FileErr string
	// Plugin is the built-in LDAP plugin class of the OU's `plugin:` block (GroupOfNames,
	// PosixGroup or Dummy), "" without one. PluginErr says why the block cannot be used; as in
	// the reference, that only fails the OU's plan and apply, never a calculation.
	Plugin, PluginErr string
}

// Filter is one entry of `filters:`.
type Filter struct {
	Name  string
	Class string // FilterMemberOfGroup, FilterMemberOfLDAPGroup or an embedder's class name
	// Group is the group reference of a MemberOfGroup filter; LDAPGroup the DN of a
	// MemberOfLDAPGroup filter.
	Group, LDAPGroup string
	// ExcludedPaths / IncludedPaths are substring matches on the group file's full path.
	ExcludedPaths, IncludedPaths []string
	// Config is the `config:` map (an empty map when the filter has none).
	Config Value
	Line   int
}

// Orgchart is the orgchart extra.
type Orgchart struct {
	ManagerMapFile string // absolute
	Line           int
	// Err is set when the extra cannot work (no manager_map_file, missing file): rules that
	// need the org chart fail with it; configs that never use it are fine.
	Err string
}

// PeopleSource is one entry of `people:`.
type PeopleSource struct {
	Name, Type string
	// Config is the `config:` map (IsNull when the source has none).
	Config Value
	Line   int
}

// OU returns the OU with that key, or nil.
func (c *Config) OU(key string) *OU { return c.byKey[key] }

// Rel renders an absolute path relative to the base directory for messages.
func (c *Config) Rel(p string) string { return RelPath(c.baseDir, p) }

// RelPath renders p relative to base when p is inside base; otherwise p unchanged.
func RelPath(base, p string) string {
	if base == "" {
		return p
	}
	if !filepath.IsAbs(base) {
		if abs, err := filepath.Abs(base); err == nil {
			base = abs
		}
	}
	r, err := filepath.Rel(base, p)
	if err != nil || r == ".." || strings.HasPrefix(r, "../") {
		return p
	}
	return r
}

// SortedOUs returns the OUs in processing order: priority, mirrors last, shorter keys first,
// then config order (a stable version of the reference's sort).
func (c *Config) SortedOUs() []*OU {
	out := slices.Clone(c.OUs)
	slices.SortStableFunc(out, func(a, b *OU) int {
		am, bm := a.Mirror != "", b.Mirror != ""
		mc := 0
		if am != bm {
			mc = -1
			if am {
				mc = 1
			}
		}
		return cmp.Or(cmp.Compare(a.Spec.Priority, b.Spec.Priority), mc,
			cmp.Compare(len(a.Key), len(b.Key)), cmp.Compare(a.Order, b.Order))
	})
	return out
}

// Load reads, renders and validates the config file at path.
func Load(path string, opt Options) (*Config, []validate.Warning, error) {
	fsys := opt.fsys()
	abs, err := vfs.Abs(fsys, path)
	if err != nil {
		return nil, nil, fmt.Errorf("config %s: %w", path, err)
	}
	base := opt.BaseDir
	if base == "" {
		base, _ = fsys.Getwd()
	}
	rel := RelPath(base, abs)
	so := safefile.Options{MaxSize: opt.MaxFileSize}
	if !opt.AllowSymlinksOutside {
		so.Roots = []string{filepath.Dir(abs)}
	}
	data, err := fsys.ReadFile(abs, so)
	if err != nil {
		return nil, nil, &validate.Error{Path: rel, Kind: validate.KindConfig,
			Msg: "cannot read configuration file: " + safefile.Reason(err), Err: err}
	}
	return Parse(abs, data, opt)
}

// Parse validates config text as if it were read from the file at path (absolute).
func Parse(path string, data []byte, opt Options) (*Config, []validate.Warning, error) {
	fsys := opt.fsys()
	base := opt.BaseDir
	if base == "" {
		base, _ = fsys.Getwd()
	}
	l := &loader{opt: opt, fsys: fsys, types: typesByName(opt.Types), rel: RelPath(base, path)}
	cfg := &Config{File: path, Dir: filepath.Dir(path), MaxParallelism: 1, baseDir: base,
		byKey: map[string]*OU{}, People: map[string]*PeopleSource{}}
	l.cfg = cfg
	// Substituted values are put back after parsing, so that none is ever read as YAML syntax.
	rd, ws, err := erb.RenderDeferred(data, erb.Options{Getenv: opt.Getenv})
	for _, w := range ws {
		l.c.Warn(l.rel, w.Line, "%s", w.Msg)
	}
	if err != nil {
		line, msg := 0, err.Error()
		if e, ok := err.(*erb.Error); ok {
			line, msg = e.Line, e.Msg // the line goes in front, once
		}
		l.c.Add(l.rel, line, validate.KindConfig, "%s", msg)
		return nil, l.c.Warnings(), l.c.Err()
	}
	root, yws, err := yaml11.Parse(rd.Text, yaml11.Options{})
	hide := regexp.MustCompile(regexp.QuoteMeta(rd.Token) + `[0-9]+_`)
	for _, w := range yws {
		l.c.Warn(l.rel, w.Line, "%s", hide.ReplaceAllString(w.Msg, envValue))
	}
	if err != nil {
		line, msg := 0, err.Error()
		if e, ok := err.(*yaml11.Error); ok {
			line, msg = e.Line, e.Msg
		}
		l.c.Add(l.rel, line, validate.KindConfig, "invalid YAML: %s", hide.ReplaceAllString(msg, envValue))
		return nil, l.c.Warnings(), l.c.Err()
	}
	root.Substitute(rd.Expand)
	l.top(root)
	if err := l.c.Err(); err != nil {
		return nil, l.c.Warnings(), err
	}
	return cfg, l.c.Warnings(), nil
}

type loader struct {
	opt   Options
	fsys  vfs.FS
	types map[string]TypeSpec
	cfg   *Config
	rel   string
	c     validate.Collector
	// broken are the OU keys whose entries were refused (reported already): what refers to
	// them reports nothing more, since "no such OU" would be a second, false error.
	broken map[string]bool
}

// envValue stands for a substituted value in messages.
const envValue = "(value from the environment)"

// show renders a config value for a message: a short excerpt, never a substituted value or
// the value of a secret key.
func show(n *yaml11.Node) string {
	switch {
	case n == nil:
		return "nil"
	case n.Substituted:
		return envValue
	}
	return textsafe.Excerpt(n.Text())
}

// plain is show without quotes, for names the reference prints bare.
func plain(n *yaml11.Node) string {
	if n != nil && n.Substituted {
		return envValue
	}
	return textsafe.ExcerptRaw(n.Text())
}

func (l *loader) errf(line int, format string, args ...any) {
	l.c.Add(l.rel, line, validate.KindConfig, format, args...)
}

type topKey struct {
	name     string
	required bool
	kind     yaml11.Kind
	class    string
}

var topKeys = []topKey{
	{"configuration_path", true, yaml11.String, "String"},
	{"backends", false, yaml11.Map, "Hash"},
	{"people", true, yaml11.Map, "Hash"},
	{"people_data_source", true, yaml11.String, "String"},
	{"groups", true, yaml11.Map, "Hash"},
	{"auditors", false, yaml11.Seq, "Array"},
	{"filters", false, yaml11.Map, "Hash"},
	{"extras", false, yaml11.Map, "Hash"},
	{"max_parallelism", false, yaml11.Int, "Integer"},
	{"ignore_expirations", false, yaml11.Bool, "Boolean"},
}

func (l *loader) top(root *yaml11.Node) {
	if root == nil || root.Kind != yaml11.Map {
		cls := "NilClass"
		if root != nil {
			cls = root.RubyClass()
		}
		l.errf(1, "Entitlements configuration file must be a map of settings, not %s!", cls)
		return
	}
	ok := true
	for _, k := range topKeys {
		v := root.Get(k.name)
		switch {
		case v == nil && k.required:
			l.errf(1, "Entitlements configuration file is missing attribute %s!", k.name)
			ok = false
		case v != nil && v.Kind != k.kind: // a key given with no value is a NilClass, as in the reference
			l.errf(v.Line, "Entitlements configuration file attribute %q is supposed to be %s, not %s!",
				k.name, k.class, v.RubyClass())
			ok = false
		}
	}
	var unknown []string
	for _, k := range root.Keys {
		if !slices.ContainsFunc(topKeys, func(t topKey) bool { return t.name == k.Text() }) {
			unknown = append(unknown, plain(k))
		}
	}
	if len(unknown) > 0 {
		l.errf(root.Keys[0].Line, "Entitlements configuration file contains unknown attribute(s): %s",
			strings.Join(unknown, ", "))
	}
	if !ok {
		return
	}
	cfg := l.cfg
	cp := root.Get("configuration_path").Str
	if filepath.IsAbs(cp) {
		cfg.ConfigurationPath = filepath.Clean(cp)
	} else {
		cfg.ConfigurationPath = filepath.Join(cfg.Dir, cp)
	}
	if v := root.Get("max_parallelism"); v != nil && v.Kind == yaml11.Int {
		if v.Int < 1 {
			l.errf(v.Line, "max_parallelism must be at least 1, not %s", show(v))
		}
		cfg.MaxParallelism = int(v.Int)
	}
	if v := root.Get("ignore_expirations"); v != nil && v.Kind == yaml11.Bool {
		cfg.IgnoreExpirations = v.Bool
	}
	if v := root.Get("auditors"); v != nil {
		l.auditors(v)
	}
	l.people(root.Get("people"), root.Get("people_data_source"))
	l.extras(root.Get("extras"))
	l.groups(root.Get("groups"), root.Get("backends"))
	l.filters(root.Get("filters"))
}

func (l *loader) auditors(v *yaml11.Node) {
	for _, a := range v.Items {
		if a.Kind != yaml11.Map {
			l.errf(a.Line, "auditor entries must be maps, not %s", a.RubyClass())
			continue
		}
		// Auditors only matter when changes are applied (package audit runs them); classes it
		// does not know make apply fail, so say so early.
		class := "(no auditor_class)"
		name := ""
		if c := a.Get("auditor_class"); c != nil && c.IsString() && c.Str != "" {
			class, name = show(c), strings.TrimSpace(c.Str)
		}
		// As package audit reads it: the class name trimmed, compared unquoted.
		if name != "GitRepo" && name != "Entitlements::Auditor::GitRepo" {
			l.c.Warn(l.rel, a.Line, "auditor %s is not supported by entitlements-go (only GitRepo is): apply refuses to run without it", class)
		}
		l.cfg.Auditors = append(l.cfg.Auditors, Value{a})
	}
}

func (l *loader) people(p, sel *yaml11.Node) {
	if len(p.Keys) == 0 {
		l.errf(p.Line, "At least one data source for people must be specified in the Entitlements configuration!")
		return
	}
	for i, k := range p.Keys {
		v := p.Values[i]
		name := k.Text()
		if v.Kind != yaml11.Map {
			l.errf(v.Line, "people source %q must be a map, not %s", name, v.RubyClass())
			continue
		}
		t := v.Get("type")
		if t == nil || !t.IsString() {
			l.errf(v.Line, "'type' is undefined in: %s", textsafe.ExcerptRaw(v.Inspect()))
			continue
		}
		switch t.Str {
		case "yaml", "ldap", "combined", "dummy":
		default:
			l.errf(t.Line, "'type' %s is invalid!", show(t))
			continue
		}
		cfgNode := v.Get("config")
		if cfgNode != nil && cfgNode.Kind != yaml11.Map && cfgNode.Kind != yaml11.Null {
			l.errf(cfgNode.Line, "people source %q: config must be a map, not %s", name, cfgNode.RubyClass())
			continue
		}
		l.cfg.People[name] = &PeopleSource{Name: name, Type: t.Str, Config: Value{cfgNode}, Line: v.Line}
	}
	if sel.Str == "" {
		l.errf(sel.Line, "The Entitlements configuration must define a people_data_source!")
		return
	}
	if _, ok := l.cfg.People[sel.Str]; !ok {
		if p.Get(sel.Str) == nil {
			l.errf(sel.Line, "The people_data_source %s is invalid!", show(sel))
		}
		return
	}
	l.cfg.PeopleDataSource = sel.Str
}

func (l *loader) extras(v *yaml11.Node) {
	if v == nil || v.Kind != yaml11.Map {
		return
	}
	for i, k := range v.Keys {
		name, e := k.Text(), v.Values[i]
		if e.Kind != yaml11.Map {
			// `orgchart:` with no value is nil, which the reference cannot load either.
			l.errf(e.Line, "extra %q must be a map (use {} for no settings), not %s", name, e.RubyClass())
			continue
		}
		if p := e.Get("path"); p != nil {
			l.errf(p.Line, "extra %q: custom extras written in Ruby (path: %s) cannot be loaded; implement it in Go and register it through the library API", name, show(p))
			continue
		}
		switch name {
		case "orgchart":
			// The reference reads the manager map only when a management or direct_report
			// rule is evaluated, so its problems are kept for that moment.
			oc := &Orgchart{Line: e.Line}
			l.cfg.Orgchart = oc
			f := e.Get("manager_map_file")
			if f == nil || !f.IsString() || f.Str == "" {
				oc.Err = "To use Entitlements::Extras::Orgchart::PersonMethods, `manager_map_file` must be defined in the configuration!"
				continue
			}
			oc.Line = f.Line
			p := f.Str
			if !filepath.IsAbs(p) {
				p = filepath.Join(l.cfg.Dir, p)
			}
			oc.ManagerMapFile = p
			if _, err := l.fsys.Stat(p); err != nil {
				name := f.Str
				if f.Substituted {
					name = envValue
				}
				oc.Err = fmt.Sprintf("The `manager_map_file` %s does not exist!", name)
			}
		case "ldap_group":
			l.cfg.LDAPGroup = Value{e}
		default:
			l.errf(k.Line, "Error loading %s: there is no built-in extra named %s (known: ldap_group, orgchart)", plain(k), show(k))
		}
	}
}

func (l *loader) groups(g, backends *yaml11.Node) {
	// Presets are checked only when an OU uses them, as in the reference.
	presets := map[string]*yaml11.Node{}
	if backends != nil {
		for i, k := range backends.Keys {
			presets[k.Text()] = backends.Values[i]
		}
	}
	l.broken = map[string]bool{}
	for i, k := range g.Keys {
		key, entry := k.Text(), g.Values[i]
		l.broken[key] = true // until the entry loads
		if entry.Kind != yaml11.Map {
			l.errf(entry.Line, "Entitlements configuration group %q must be a map, not %s", key, entry.RubyClass())
			continue
		}
		merged := entry
		if b := entry.Get("backend"); b != nil {
			preset, ok := presets[b.Text()]
			switch {
			case !ok:
				l.errf(b.Line, "Entitlements configuration group %q references non-existing backend %s!", key, show(b))
				continue
			case preset.Kind != yaml11.Map:
				l.errf(preset.Line, "Entitlements backend %q must be a map, not %s", b.Text(), preset.RubyClass())
				continue
			case preset.Get("type") == nil:
				l.errf(preset.Line, "Entitlements backend %q is missing a type!", b.Text())
				continue
			}
			merged = mergeMaps(preset, entry, "backend")
		}
		ou := l.ou(key, merged, k.Line)
		if ou == nil {
			continue
		}
		delete(l.broken, key)
		ou.Order = len(l.cfg.OUs)
		l.cfg.OUs = append(l.cfg.OUs, ou)
		l.cfg.byKey[key] = ou
	}
	for _, ou := range l.cfg.OUs {
		l.checkMirror(ou)
	}
	l.overlaps()
	for _, ou := range l.cfg.OUs {
		if ou.Spec.Check != nil {
			ou.Spec.Check(&Checker{l}, ou)
		}
	}
}

// overlaps rejects two OUs that would manage the same things: each run of one would delete or
// rewrite what the other wrote, and the config would flap forever. Each type says what
// overlapping means for it (TypeSpec.Overlap).
func (l *loader) overlaps() {
	ous := l.cfg.OUs
	memo := map[string]map[string]string{} // OU key → its group files
	files := func(ou *OU) map[string]string { return l.groupFiles(ou, memo) }
	for j, b := range ous {
		for _, a := range ous[:j] {
			if a.Type != b.Type || a.Spec.Overlap == nil {
				continue
			}
			if why := a.Spec.Overlap(a, b, files); why != "" {
				l.errf(b.Line, "groups %q and %q overlap: %s; each run would undo the other's changes", a.Key, b.Key, why)
			}
		}
	}
}

// groupFiles maps the group names of an OU directory, in lower case, to each file's path as
// messages show it (GroupFiles). It follows the enumeration rules of the calculation (spec 3.2): dotfiles, directories,
// README.md and PR_TEMPLATE.md are no groups, nor are names the calculation refuses (that is
// its own error).
func (l *loader) groupFiles(ou *OU, memo map[string]map[string]string) map[string]string {
	if m, ok := memo[ou.Key]; ok {
		return m
	}
	m := map[string]string{}
	memo[ou.Key] = m
	ents, err := l.fsys.ReadDir(ou.Dir)
	if err != nil {
		return m // reported by the calculation ("Non-existing directory")
	}
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, ".") || e.IsDir() || name == "README.md" || name == "PR_TEMPLATE.md" {
			continue
		}
		cn, ext, ok := strings.Cut(name, ".")
		if !ok || strings.Contains(ext, ".") || (ext != "txt" && ext != "yaml" && ext != "rb") || !groupName(cn) {
			continue
		}
		m[strings.ToLower(cn)] = filepath.ToSlash(l.cfg.Rel(filepath.Join(ou.Dir, name)))
	}
	return m
}

// groupName reports whether cn is a group name the calculation accepts ([A-Za-z0-9_-]+).
func groupName(cn string) bool {
	if cn == "" {
		return false
	}
	for _, r := range cn {
		if !(r == '_' || r == '-' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
			return false
		}
	}
	return true
}

// mergeMaps returns preset ∪ entry where entry wins; drop names a key removed from the result.
func mergeMaps(preset, entry *yaml11.Node, drop string) *yaml11.Node {
	out := &yaml11.Node{Kind: yaml11.Map, Line: entry.Line}
	for i, k := range preset.Keys {
		if k.Text() == drop || entry.Get(k.Text()) != nil {
			continue
		}
		out.Keys = append(out.Keys, k)
		out.Values = append(out.Values, preset.Values[i])
	}
	for i, k := range entry.Keys {
		if k.Text() == drop {
			continue
		}
		out.Keys = append(out.Keys, k)
		out.Values = append(out.Values, entry.Values[i])
	}
	return out
}

func (l *loader) ou(key string, m *yaml11.Node, line int) *OU {
	t := m.Get("type")
	if t == nil || !t.IsString() || t.Str == "" {
		l.errf(line, "Entitlements configuration group %q does not properly declare a type!", key)
		return nil
	}
	spec, ok := l.types[t.Str]
	if !ok {
		hint := ""
		if len(l.types) == 0 {
			hint = "; no backend type is registered (Options.Types: see package backends)"
		} else if c := suggest.Closest(t.Str, slices.Values(slices.Sorted(maps.Keys(l.types)))); c != "" {
			hint = fmt.Sprintf("; did you mean %q?", c)
		}
		l.errf(t.Line, "Entitlements configuration group %q has invalid type (%s)%s", key, show(t), hint)
		return nil
	}
	ou := &OU{Key: key, Type: t.Str, Spec: spec, Line: line, Settings: Value{mergeMaps(&yaml11.Node{Kind: yaml11.Map}, m, "type")}}
	for i, k := range m.Keys {
		// A substituted secret is text as given, even when it reads as a number.
		if v := m.Values[i]; v.Substituted && (v.Kind == yaml11.Bool || v.Kind == yaml11.Int) &&
			(slices.Contains(spec.Secrets, k.Text()) || yaml11.SecretKey(k.Text())) {
			v.Kind = yaml11.String
		}
	}
	bad := false
	if !spec.AnyKeys {
		for _, r := range spec.Required {
			v := m.Get(r)
			if sub := spec.Substitutes[r]; v == nil && sub != "" && m.Get(sub) != nil {
				continue
			}
			secret := slices.Contains(spec.Secrets, r)
			switch {
			case v == nil && !secret:
				l.errf(line, "Group %q is missing attribute %s!", key, r)
				bad = true
			case v == nil || v.Kind == yaml11.Null:
				if !secret {
					l.errf(v.Line, "Group %q attribute %s is supposed to be a value, not nil (is an environment variable unset?)", key, r)
					bad = true
				}
			case slices.Contains(spec.Lists, r):
				if v.Kind != yaml11.Seq {
					l.errf(v.Line, "Group %q attribute %s is supposed to be Array, not %s!", key, r, v.RubyClass())
					bad = true
				}
			case !v.IsString():
				l.errf(v.Line, "Group %q attribute %s is supposed to be String, not %s!", key, r, v.RubyClass())
				bad = true
			}
		}
		var unknown []string
		for _, k := range ou.Settings.n.Keys {
			if !spec.accepts(k.Text()) {
				hint := ""
				if c := suggest.Closest(k.Text(), spec.keys()); c != "" {
					hint = fmt.Sprintf(" (did you mean %q?)", c)
				}
				unknown = append(unknown, k.Text()+hint)
			}
		}
		if len(unknown) > 0 {
			l.errf(line, "Group %q contains unknown attribute(s): %s", key, strings.Join(unknown, ", "))
			bad = true
		}
		for _, b := range []string{"create_if_missing", "disable_ssl_verification", "ldap_disable_ssl_verification", "ignore_not_found"} {
			if v := m.Get(b); v != nil && v.Kind != yaml11.Bool {
				l.errf(v.Line, "Group %q attribute %s is supposed to be a boolean, not %s!", key, b, v.RubyClass())
				bad = true
			}
		}
		for _, k := range slices.Sorted(maps.Keys(spec.Enums)) {
			v := m.Get(k)
			if v == nil {
				continue
			}
			allowed := spec.Enums[k]
			if !v.IsString() || !slices.ContainsFunc(allowed, func(a string) bool { return strings.EqualFold(a, v.Str) }) {
				shown := show(v)
				if yaml11.SecretKey(k) {
					// `credential: ghp_...` is a token written where its kind belongs.
					shown = yaml11.Filtered
				}
				l.errf(v.Line, "Group %q attribute %s is %s; it must be one of: %s", key, k, shown, strings.Join(allowed, ", "))
				bad = true
			}
		}
		if !l.credentials(key, spec, m, line) {
			bad = true
		}
		if p := m.Get("plugin"); p != nil {
			bad = !l.plugin(ou, p) || bad
		}
	}
	if b := m.Get("base"); b != nil && b.IsString() {
		ou.Base = b.Str
		if baseHasSlash(b.Str) {
			// The audit log stores a group at its DN's RDNs as path elements: a '/' in one
			// would split it into directories (and `..` among them would leave the checkout).
			l.errf(b.Line, "Group %q attribute base %s contains '/', which LDAP allows but the audit log path cannot hold", key, show(b))
			bad = true
		}
	}
	if mi := m.Get("mirror"); mi != nil {
		switch {
		case mi.IsString():
			ou.Mirror = mi.Str
		case spec.AnyKeys:
			// Untyped OUs (dummy) are not validated by the reference, nor calculated.
			if truthy(mi) {
				l.c.Warn(l.rel, mi.Line, "Group %q attribute mirror is %s, not a String; a %s OU calculates nothing, so it is ignored", key, mi.RubyClass(), t.Str)
			}
		default:
			l.errf(mi.Line, "Group %q attribute mirror is supposed to be String, not %s!", key, mi.RubyClass())
			bad = true
		}
	}
	if v := m.Get("allowed_methods"); v != nil {
		if v.Kind != yaml11.Seq {
			msg := fmt.Sprintf("allowed_methods must be an Array in group %q!", key)
			if spec.AnyKeys {
				// Untyped OUs (dummy) are not validated by the reference: the problem only
				// shows when one of their files is used.
				ou.FileErr = msg
			} else {
				l.errf(v.Line, "%s", msg)
				bad = true
			}
		} else {
			ou.AllowedMethods = []string{}
			for _, it := range v.Items {
				ou.AllowedMethods = append(ou.AllowedMethods, it.Text())
			}
		}
	}
	if v := m.Get("allowed_types"); v != nil {
		if v.Kind != yaml11.Seq {
			msg := fmt.Sprintf("Configuration error: allowed_types should be an Array, got %s!", v.RubyClass())
			if spec.AnyKeys {
				ou.FileErr = msg
			} else {
				l.errf(v.Line, "%s", msg)
				bad = true
			}
		} else {
			ou.AllowedTypes = []string{}
			for _, it := range v.Items {
				ou.AllowedTypes = append(ou.AllowedTypes, it.Text())
			}
		}
	}
	ou.Dir = filepath.Join(l.cfg.ConfigurationPath, key)
	if d := m.Get("dir"); d != nil {
		if !d.IsString() {
			l.errf(d.Line, "Group %q attribute dir is supposed to be String, not %s!", key, d.RubyClass())
			bad = true
		} else {
			ou.DirGiven = true
			if filepath.IsAbs(d.Str) {
				ou.Dir = filepath.Clean(d.Str)
			} else {
				ou.Dir = filepath.Join(l.cfg.ConfigurationPath, d.Str)
			}
		}
	}
	if bad {
		return nil
	}
	if spec.Enumerates && ou.Mirror == "" {
		if st, err := l.fsys.Stat(ou.Dir); err != nil || !st.IsDir() {
			dir := strconv.Quote(l.cfg.Rel(ou.Dir))
			if d := m.Get("dir"); d != nil && d.Substituted {
				dir = envValue
			}
			l.errf(line, "Non-existing directory %s for group %q!", dir, key)
			return nil
		}
	}
	return ou
}

// credentials refuses an OU whose keys give two kinds of credential (TypeSpec.Credentials)
// without a `credential` key saying which one to use. It names the keys, never their values.
func (l *loader) credentials(key string, spec TypeSpec, m *yaml11.Node, line int) bool {
	if c := m.Get("credential"); len(spec.Credentials) == 0 || c != nil && c.Kind != yaml11.Null {
		return true
	}
	var given []string
	var kinds []string
	for _, kind := range slices.Sorted(maps.Keys(spec.Credentials)) {
		var keys []string
		for _, k := range spec.Credentials[kind] {
			if v := m.Get(k); v != nil && v.Kind != yaml11.Null && strings.TrimSpace(v.Text()) != "" {
				keys = append(keys, k)
			}
		}
		if len(keys) > 0 {
			kinds = append(kinds, kind)
			given = append(given, kind+": "+strings.Join(keys, ", "))
		}
	}
	if len(kinds) < 2 {
		return true
	}
	// The kind spelled first in the type's enum of `credential` comes first in the message.
	if order := spec.Enums["credential"]; len(order) > 0 {
		idx := func(k string) int { return slices.Index(order, strings.SplitN(k, ":", 2)[0]) }
		slices.SortStableFunc(given, func(a, b string) int { return idx(a) - idx(b) })
		slices.SortStableFunc(kinds, func(a, b string) int { return slices.Index(order, a) - slices.Index(order, b) })
	}
	choices := make([]string, len(kinds))
	for i, k := range kinds {
		choices[i] = "`credential: " + k + "`"
	}
	l.errf(line, "Group %q gives more than one credential (%s): keep one, or say which one to use with %s", key,
		strings.Join(given, "; "), strings.Join(choices, " or "))
	return false
}

// plugin reads an OU's `plugin:` block. The reference checks that it is a map when the
// config is loaded, and the rest only when it applies a change to the OU (calculating never
// loads a plugin), so a block that cannot be used is a warning here and the OU's provider
// refuses it (OU.PluginErr). It reports whether the block is acceptable at load.
func (l *loader) plugin(ou *OU, p *yaml11.Node) bool {
	if p.Kind != yaml11.Map {
		l.errf(p.Line, "Group %q attribute plugin is supposed to be Hash, not %s!", ou.Key, p.RubyClass())
		return false
	}
	c := p.Get("class")
	switch {
	case p.Get("file") == nil:
		ou.PluginErr = "plugin configuration hash must contain 'file' key"
	case c == nil:
		ou.PluginErr = "plugin configuration hash must contain 'class' key"
	case c.IsString() && slices.Contains([]string{"GroupOfNames", "PosixGroup", "Dummy"}, c.Str):
		ou.Plugin = c.Str
		return true
	default:
		ou.PluginErr = fmt.Sprintf("LDAP plugin class %s is Ruby code and cannot be loaded (built-in: GroupOfNames, PosixGroup, Dummy)", show(c))
	}
	l.c.Warn(l.rel, p.Line, "Group %q: %s; calculating is not affected, but planning or applying this OU fails", ou.Key, ou.PluginErr)
	return true
}

// checkMirror runs the reference's mirror checks (validate_mirror!) where the reference runs
// them: on an OU whose backend calculates its mirror. Any other OU (dummy) is never
// calculated by the reference and nothing checks its `mirror`; we list its copy of the
// source's groups (as the corpus lists mirror OUs) when there is one, and otherwise ignore
// the key with a warning.
func (l *loader) checkMirror(ou *OU) {
	if ou.Mirror == "" {
		return
	}
	var problems []string
	if st, err := l.fsys.Stat(ou.Dir); err == nil && st.IsDir() {
		problems = append(problems, fmt.Sprintf("%q is declared as a mirror OU but source %q exists!", ou.Key, l.cfg.Rel(ou.Dir)))
	}
	src := l.cfg.byKey[ou.Mirror]
	target := show(ou.Settings.n.Get("mirror"))
	switch {
	case src == nil && l.broken[ou.Mirror]:
		// The target is configured but its entry was refused, which is reported already.
	case src == nil:
		problems = append(problems, fmt.Sprintf("%q is declared as a mirror to a non-existing target %s!", ou.Key, target))
	case truthy(src.Settings.n.Get("mirror")):
		// The reference looks at the target's `mirror` key, whatever the target's type.
		problems = append(problems, fmt.Sprintf("%q is declared as a mirror to a mirror target %s!", ou.Key, target))
	case !src.Spec.Enumerates && ou.Spec.Enumerates:
		// Calculating a mirror needs the source's groups enumerated (read_all), which a
		// backend like dummy never does.
		problems = append(problems, fmt.Sprintf("%q is declared as a mirror of %q, whose %s backend does not enumerate its groups", ou.Key, ou.Mirror, src.Type))
	}
	for _, p := range problems {
		if ou.Spec.Enumerates {
			l.errf(ou.Line, "%s", p)
		} else {
			l.c.Warn(l.rel, ou.Line, "%s (a %s OU calculates nothing, so its mirror is ignored)", p, ou.Type)
		}
	}
	if len(problems) > 0 && !ou.Spec.Enumerates {
		ou.Mirror = ""
	}
}

// truthy is Ruby's truth of a YAML value: anything but null and false.
func truthy(n *yaml11.Node) bool {
	return n != nil && n.Kind != yaml11.Null && !(n.Kind == yaml11.Bool && !n.Bool)
}

// reservedFilterNames would hijack rule or reserved keys of .txt files.
var reservedFilterNames = []string{"username", "group", "entitlements_group", "ldap_group",
	"management", "direct_report", "description", "expiration", "always", "contractor"}

func (l *loader) filters(v *yaml11.Node) {
	if v == nil {
		return
	}
	for i, k := range v.Keys {
		name, f := k.Text(), v.Values[i]
		if f.Kind != yaml11.Map {
			l.errf(f.Line, "filter %q must be a map with class and config, not %s", name, f.RubyClass())
			continue
		}
		if slices.Contains(reservedFilterNames, name) || strings.HasPrefix(name, "metadata_") ||
			strings.HasPrefix(name, "filter_") || strings.HasPrefix(name, "modifier_") {
			l.errf(k.Line, "filter name %q collides with a rule method or reserved key of .txt files", name)
			continue
		}
		c := f.Get("class")
		if c == nil || !c.IsString() {
			l.errf(f.Line, "filter %q is missing its class (key not found: \"class\")", name)
			continue
		}
		flt := &Filter{Name: name, Line: k.Line}
		if kc, ok := filterClasses[c.Str]; ok {
			flt.Class = kc
		} else if slices.Contains(l.opt.FilterClasses, c.Str) {
			flt.Class = c.Str
		} else {
			l.errf(c.Line, "filter %q: unknown filter class %s (built-in: Entitlements::Data::Groups::Calculated::Filters::MemberOfGroup, Entitlements::Extras::LDAPGroup::Filters::MemberOfLDAPGroup)", name, show(c))
			continue
		}
		conf := f.Get("config")
		if conf == nil || conf.Kind == yaml11.Null {
			conf = &yaml11.Node{Kind: yaml11.Map, Line: f.Line}
		}
		if conf.Kind != yaml11.Map {
			l.errf(conf.Line, "filter %q: config must be a map, not %s", name, conf.RubyClass())
			continue
		}
		flt.Config = Value{conf}
		ok := true
		switch flt.Class {
		case FilterMemberOfGroup:
			g := conf.Get("group")
			if g == nil || !g.IsString() || !strings.Contains(g.Str, "/") {
				l.errf(conf.Line, "filter %q: config.group must be a group reference such as internal/contractors", name)
				ok = false
			} else {
				flt.Group = g.Str
			}
		case FilterMemberOfLDAPGroup:
			if !l.cfg.LDAPGroup.Exists() {
				l.errf(c.Line, "filter %q: class %s needs the ldap_group extra (uninitialized constant)", name, c.Str)
				ok = false
			}
			g := conf.Get("ldap_group")
			if g == nil || !g.IsString() {
				l.errf(conf.Line, "filter %q: config.ldap_group must be the DN of an LDAP group", name)
				ok = false
			} else {
				flt.LDAPGroup = g.Str
			}
		}
		for _, pk := range []string{"excluded_paths", "included_paths"} {
			p := conf.Get(pk)
			if p == nil || p.Kind == yaml11.Null {
				continue // null means unset, as in the reference
			}
			if p.Kind != yaml11.Seq {
				l.errf(p.Line, "filter %q: %s must be a list of strings", name, pk)
				ok = false
				continue
			}
			list := []string{}
			for _, it := range p.Items {
				list = append(list, it.Text())
			}
			if pk == "excluded_paths" {
				flt.ExcludedPaths = list
			} else {
				flt.IncludedPaths = list
			}
		}
		if ok {
			l.cfg.Filters = append(l.cfg.Filters, flt)
		}
	}
}

// baseHasSlash reports whether a base DN holds a '/', written as it is or escaped (`\/`,
// `\2F`).
func baseHasSlash(base string) bool {
	if strings.Contains(base, "/") {
		return true
	}
	d, err := dn.Parse(base)
	if err != nil {
		return false
	}
	for _, r := range d {
		for _, a := range r {
			if strings.Contains(a.Value, "/") {
				return true
			}
		}
	}
	return false
}
