package calc

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/internal/vfs"
	"github.com/entitlements-go/entitlements/people"
	"github.com/entitlements-go/entitlements/validate"
)

// loadPeople reads the people data and the manager map. The people data's problems go to c
// and are returned (the people are unusable); the manager map's go to org, since they only
// concern management rules.
func (ld *loader) loadPeople(ctx context.Context, c, org *validate.Collector) error {
	src := ld.cfg.People[ld.cfg.PeopleDataSource]
	var mmFile string
	if oc := ld.cfg.Orgchart; oc != nil && oc.Err == "" {
		mmFile = oc.ManagerMapFile
	}
	if src.Type == "yaml" {
		if f, ok := src.Config.Get("filename").AsString(); ok && f != "" {
			if ld.inc.reusePeople(ld, ld.peoplePath(f), mmFile) {
				if ld.cfg.Orgchart != nil && !ld.inc.orgSame {
					ld.loadOrgchart(org)
					ld.inc.afterPeople(ld)
				}
				return nil
			}
		}
	}
	defer ld.inc.afterPeople(ld)
	// The manager map is as large as the people file: parse both at once.
	type mmResult struct {
		m   map[string]people.Manager
		err error
	}
	mmDone := make(chan mmResult, 1)
	if oc := ld.cfg.Orgchart; oc != nil && oc.Err == "" {
		go func() {
			m, err := ld.readManagerMap(oc.ManagerMapFile)
			mmDone <- mmResult{m, err}
		}()
	}
	persons, err := ld.readPeople(ctx, src, 0)
	if err != nil {
		var les people.LineErrors
		if errors.As(err, &les) {
			for _, le := range les {
				c.Add(ld.peopleRel(src), le.Line, validate.KindPeople, "%s", le.Msg)
			}
		} else {
			c.AddError(&validate.Error{Path: ld.cfg.Rel(ld.cfg.File), Line: src.Line, Kind: validate.KindPeople,
				Msg: fmt.Sprintf("people source %q: %v", src.Name, err), Err: err})
		}
		return c.Err()
	}
	if len(persons) == 0 && src.Type != "dummy" && !ld.opt.AllowEmptyPeople {
		c.AddError(&validate.Error{Path: ld.cfg.Rel(ld.cfg.File), Line: src.Line, Kind: validate.KindPeople,
			Msg: fmt.Sprintf("people source %q yields no people; refusing to calculate, since every group would lose every member (allow an empty source explicitly if this is intended)", src.Name),
			Err: ErrNoPeople})
		return c.Err()
	}
	dir, err := people.NewDirectory(persons)
	if err != nil {
		c.AddError(&validate.Error{Path: ld.peopleRel(src), Kind: validate.KindPeople, Msg: err.Error(), Err: err})
		return c.Err()
	}
	ld.dir = dir
	ld.universe = roaring.New()
	ld.universe.AddRange(0, uint64(dir.Len()))
	if oc := ld.cfg.Orgchart; oc != nil {
		var mm mmResult
		if oc.Err == "" {
			mm = <-mmDone
		}
		ld.setOrgchart(mm.m, mm.err, org)
	}
	return nil
}

// withoutPeople is the state after the people data failed to load (the errors are
// reported): an empty directory, so that references and cycles are still checked against
// nobody and one run reports every problem of the repo.
func (ld *loader) withoutPeople() {
	ld.noPeople = true
	ld.dir, _ = people.NewDirectory(nil)
	ld.universe = roaring.New()
	ld.org, ld.orgErr = nil, nil
}

func (ld *loader) readManagerMap(path string) (map[string]people.Manager, error) {
	data, err := ld.fsys.ReadFile(path, ld.confined(filepath.Dir(path)))
	if err != nil {
		return nil, fmt.Errorf("manager map: %w", err)
	}
	ld.mmData = data
	if m, ok := ld.inc.managerMapFromBase(data); ok {
		return m, nil
	}
	return people.ParseManagerMap(path, data)
}

// loadOrgchart reads the manager map for people already loaded.
func (ld *loader) loadOrgchart(c *validate.Collector) {
	oc := ld.cfg.Orgchart
	if oc.Err != "" {
		ld.setOrgchart(nil, nil, c)
		return
	}
	m, err := ld.readManagerMap(oc.ManagerMapFile)
	ld.setOrgchart(m, err, c)
}

// setOrgchart builds the org chart. A manager map that cannot be read or parsed only fails
// the rules that need it (orgErr), as in the reference; values of the wrong type are refused
// at load, each at its line (issue 23).
func (ld *loader) setOrgchart(m map[string]people.Manager, err error, c *validate.Collector) {
	oc := ld.cfg.Orgchart
	var les people.LineErrors
	switch {
	case oc.Err != "":
		ld.orgErr = fmt.Errorf("%s: %w", oc.Err, people.ErrManagerMap)
	case errors.As(err, &les):
		for _, le := range les {
			c.Add(ld.cfg.Rel(oc.ManagerMapFile), le.Line, validate.KindPeople, "%s", le.Msg)
		}
		ld.noOrg = true
	case err != nil:
		ld.orgErr = fmt.Errorf("%v: %w", err, people.ErrManagerMap)
	default:
		ld.org, ld.mm = people.NewOrgchart(ld.dir, m), m
		ld.checkManagerMap()
	}
}

func (ld *loader) peopleRel(src *config.PeopleSource) string {
	if f, ok := src.Config.Get("filename").AsString(); ok {
		return ld.cfg.Rel(ld.peoplePath(f))
	}
	return ld.cfg.Rel(ld.cfg.File)
}

// peoplePath resolves a people file name: relative to the working directory, as in the
// reference; when no such file exists there, relative to the config file's directory
// (an extension: it lets a repo run from anywhere and changes nothing for configs that work
// today). Absolute paths are used as written.
func (ld *loader) peoplePath(name string) string {
	if filepath.IsAbs(name) {
		return name
	}
	abs, err := vfs.Abs(ld.fsys, name)
	if err != nil {
		return name
	}
	if _, err := ld.fsys.Stat(abs); err != nil {
		if alt := filepath.Join(ld.cfg.Dir, name); ld.fileExists(alt) {
			return alt
		}
	}
	return abs
}

func (ld *loader) fileExists(p string) bool {
	st, err := ld.fsys.Stat(p)
	return err == nil && !st.IsDir()
}

func (ld *loader) readPeople(ctx context.Context, src *config.PeopleSource, depth int) ([]people.Person, error) {
	if depth > 8 {
		return nil, fmt.Errorf("combined people sources nest too deeply")
	}
	switch src.Type {
	case "yaml":
		f, ok := src.Config.Get("filename").AsString()
		if !ok || f == "" {
			return nil, fmt.Errorf("a yaml people source needs config.filename")
		}
		path := ld.peoplePath(f)
		ld.opt.Logger.Debug("reading people", "source", src.Name, "path", path)
		data, err := ld.fsys.ReadFile(path, ld.confined(filepath.Dir(path)))
		if err != nil {
			return nil, fmt.Errorf("people file: %w", err)
		}
		if depth == 0 {
			ld.peopleData = data
		}
		if ps, ok := ld.inc.peopleFromBase(data); ok {
			if depth == 0 {
				ld.peopleList = ps
			}
			return ps, nil
		}
		ps, err := people.ParseYAML(data)
		if depth == 0 {
			ld.peopleList = ps
		}
		return ps, err
	case "dummy":
		return nil, nil
	case "combined":
		return ld.readCombined(ctx, src, depth)
	}
	if ld.opt.People == nil {
		return nil, fmt.Errorf("people source type %q needs a people loader (for example the LDAP provider); only yaml sources can be read offline", src.Type)
	}
	return ld.opt.People(ctx, src)
}

// readCombined merges component sources with `or` (union) or `and` (intersection); the first
// component that has a uid supplies the person. uids match case-insensitively.
func (ld *loader) readCombined(ctx context.Context, src *config.PeopleSource, depth int) ([]people.Person, error) {
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
			sub = ld.cfg.People[name]
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
		ps, err := ld.readPeople(ctx, sub, depth+1)
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
