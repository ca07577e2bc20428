package people

import (
	"errors"
	"fmt"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/entitlements-go/entitlements/internal/safefile"
	"github.com/entitlements-go/entitlements/internal/textsafe"
	"github.com/entitlements-go/entitlements/internal/yaml11"
)

// Org-chart errors that rules report; callers branch on them with errors.Is.
var (
	ErrUnknownManager = errors.New("manager does not exist")
	ErrNoReports      = errors.New("manager has no reports")
	// ErrManagerMap: a person of the people data is missing from the manager map (or has no
	// manager there), which makes every management rule fail, as in the reference.
	ErrManagerMap = errors.New("incomplete manager map")
)

// Orgchart answers management (a manager plus everyone below) and direct_report (a manager plus
// first-level reports) over a Directory. It is built once per run from the manager map, and
// every answer is a bitset of person IDs.
type Orgchart struct {
	dir *Directory
	// directs maps a lower-cased manager uid to the IDs of their direct reports. Managers who
	// are not people can still have reports; they just cannot be named in a rule.
	directs map[string][]uint32
	// missing is the first person absent from the manager map: the reference builds its index
	// from every person, so any management rule then fails.
	missing error
	mgr     map[string]Manager
}

// Manager is what a manager-map entry says about a person's manager.
type Manager struct {
	// UID is the manager's uid as written. The empty string is a value, as in the reference:
	// the person reports to a manager who is nobody.
	UID string
	// None: the entry names no manager (null or false, no manager key, or an entry that is
	// not a map). Every management rule then fails, as in the reference.
	None bool
}

// LoadManagerMap reads a manager map file: lower-case uid → {manager: uid, ...}.
func LoadManagerMap(path string) (map[string]Manager, error) { return LoadManagerMapFile(path, 0) }

// LoadManagerMapFile is LoadManagerMap with a size cap in bytes (0: the default of 64 MiB;
// negative: none). Only a regular file is read.
func LoadManagerMapFile(path string, maxSize int64) (map[string]Manager, error) {
	data, err := safefile.Read(path, safefile.Options{MaxSize: maxSize})
	if err != nil {
		return nil, fmt.Errorf("manager map: %w", err)
	}
	return ParseManagerMap(path, data)
}

// ParseManagerMap parses manager map text read from path (named in errors). A manager that
// is neither a string nor null/false (`manager: 123`, a list) is refused: the reference
// fails on it as soon as a management rule builds the org chart. Every such entry is
// reported, as LineErrors.
func ParseManagerMap(path string, data []byte) (map[string]Manager, error) {
	if out, ok := managerEntries(data); ok {
		return out, nil
	}
	return managerWhole(path, data)
}

// managerWhole parses a manager map as one document.
func managerWhole(path string, data []byte) (map[string]Manager, error) {
	root, _, err := yaml11.Parse(data, yaml11.Options{AllowDates: true})
	if err != nil {
		return nil, fmt.Errorf("manager map %s: %w", path, err)
	}
	out := make(map[string]Manager, len(root.Keys))
	if root.Kind == yaml11.Null {
		return out, nil
	}
	if root.Kind != yaml11.Map {
		return nil, fmt.Errorf("manager map %s: expected a map of uid to {manager: uid}, got %s", path, root.RubyClass())
	}
	var errs LineErrors
	for i, k := range root.Keys {
		m, err := managerOf(k, root.Values[i])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out[k.Text()] = m
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// managerEntries is parseEntries for a manager map.
func managerEntries(data []byte) (map[string]Manager, bool) {
	var out map[string]Manager
	ok := eachEntry(data, func(n int) { out = make(map[string]Manager, n) }, func(k, v *yaml11.Node) bool {
		m, err := managerOf(k, v)
		out[k.Text()] = m
		return err == nil
	})
	return out, ok
}

// managerOf is the manager of a manager-map entry. As in Ruby, where only nil and false are
// "no manager", the empty string is a manager; any other value is an error.
func managerOf(k, v *yaml11.Node) (Manager, *LineError) {
	m := v.Get("manager")
	switch {
	case m == nil || m.Kind == yaml11.Null || m.Kind == yaml11.Bool && !m.Bool:
		return Manager{None: true}, nil
	case m.Kind == yaml11.String:
		return Manager{UID: m.Str}, nil
	}
	return Manager{}, &LineError{m.Line, fmt.Sprintf("manager of %s is %s (%s), not a string (quote it if it is a uid)",
		textsafe.Excerpt(k.Text()), article(m.RubyClass()), written(m))}
}

// article prefixes a Ruby class name with "a" or "an".
func article(class string) string {
	if strings.ContainsRune("AEIOU", rune(class[0])) {
		return "an " + class
	}
	return "a " + class
}

// NewOrgchart indexes managerMap (keys are lower-case uids) for the people of dir.
func NewOrgchart(dir *Directory, managerMap map[string]Manager) *Orgchart {
	o := &Orgchart{dir: dir, directs: map[string][]uint32{}, mgr: managerMap}
	for id := range dir.persons {
		uid := dir.persons[id].UID
		low := strings.ToLower(uid)
		m, ok := managerMap[low]
		switch {
		case !ok:
			if o.missing == nil {
				o.missing = fmt.Errorf("User %s is not included in manager map data!: %w", low, ErrManagerMap)
			}
			continue
		case m.None:
			if o.missing == nil {
				o.missing = fmt.Errorf("User %s does not have a manager listed in manager map data!: %w", low, ErrManagerMap)
			}
			continue
		}
		mlow := strings.ToLower(m.UID)
		if mlow == low { // the root of the tree manages itself (case-insensitively, Q-14)
			continue
		}
		o.directs[mlow] = append(o.directs[mlow], uint32(id))
	}
	return o
}

func (o *Orgchart) manager(value string) (uint32, error) {
	if o.missing != nil {
		return 0, o.missing
	}
	id, ok := o.dir.Lookup(value)
	if !ok {
		return 0, fmt.Errorf("Manager %s does not exist!: %w", textsafe.ExcerptRaw(value), ErrUnknownManager)
	}
	if len(o.directs[strings.ToLower(o.dir.UID(id))]) == 0 {
		return 0, fmt.Errorf("Manager %s has no reports!: %w", textsafe.ExcerptRaw(value), ErrNoReports)
	}
	return id, nil
}

// Err is the problem that makes every management rule fail (a person missing from the manager
// map), or nil.
func (o *Orgchart) Err() error { return o.missing }

// DirectReports is the manager plus their direct reports.
func (o *Orgchart) DirectReports(value string) (*roaring.Bitmap, error) {
	id, err := o.manager(value)
	if err != nil {
		return nil, err
	}
	b := roaring.New()
	b.Add(id)
	for _, r := range o.directs[strings.ToLower(o.dir.UID(id))] {
		b.Add(r)
	}
	return b, nil
}

// Management is the manager plus everyone reporting to them, directly or not. Cycles in the
// data terminate because each person is visited once.
func (o *Orgchart) Management(value string) (*roaring.Bitmap, error) {
	id, err := o.manager(value)
	if err != nil {
		return nil, err
	}
	b := roaring.New()
	b.Add(id)
	queue := []uint32{id}
	for len(queue) > 0 {
		m := queue[0]
		queue = queue[1:]
		for _, r := range o.directs[strings.ToLower(o.dir.UID(m))] {
			if b.CheckedAdd(r) {
				queue = append(queue, r)
			}
		}
	}
	return b, nil
}

// Chain returns the management chain from person up to (and including) manager, or nil when
// the person does not report to the manager. Explain uses it to show an org-chart path.
func (o *Orgchart) Chain(person uint32, manager string) []string {
	target := strings.ToLower(manager)
	cur := strings.ToLower(o.dir.UID(person))
	path := []string{o.dir.UID(person)}
	seen := map[string]bool{}
	for cur != target {
		if seen[cur] {
			return nil
		}
		seen[cur] = true
		m, ok := o.mgr[cur]
		next := m.UID
		if !ok || m.None || next == "" || strings.EqualFold(next, cur) {
			return nil
		}
		cur = strings.ToLower(next)
		if id, ok := o.dir.Lookup(cur); ok {
			path = append(path, o.dir.UID(id))
		} else {
			path = append(path, next)
		}
	}
	return path
}
