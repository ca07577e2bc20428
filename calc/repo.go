package calc

import (
	"context"
	"errors"
	"io/fs"
	"sync"
	"time"

	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/internal/vfs"
	"github.com/entitlements-go/entitlements/people"
	"github.com/entitlements-go/entitlements/validate"
)

// Repo is a loaded and validated entitlements repository: config, people, every definition
// that a run uses (parsed once), and the dependency graph between groups with references
// resolved and cycles rejected. A Repo that Load returns cannot fail to calculate.
//
// Repo composes the phases of a run (see the package documentation): the loader reads the
// repository, the linker resolves references and orders the groups, the evaluator computes
// their members, and inc is what an incremental load reuses from its base. Each owns its
// state; Repo only sequences them and keeps what the caller sees.
type Repo struct {
	ld loader
	lk linker
	ev evaluator
	// inc is the reuse plan of an incremental load (nil for a full one).
	inc *incState

	warnings []validate.Warning
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
	r := &Repo{warnings: warns}
	ld := &r.ld
	*ld = loader{cfg: cfg, opt: opt, fsys: fsysOf(opt), today: validate.Today(opt.Now),
		ignore:   opt.IgnoreExpirations || cfg.IgnoreExpirations,
		listings: map[string]*listing{}, groups: map[string]*group{}}
	c := &validate.Collector{}
	ld.registerMethods(c)
	r.inc = newIncState(ld)
	ld.inc = r.inc
	r.ev = evaluator{ld: ld, inc: r.inc, leaves: map[leafKey]leafResult{}}
	r.lk = linker{ld: ld, ev: &r.ev}
	ld.fnames = make(map[string]bool, len(cfg.Filters))
	for _, f := range cfg.Filters {
		r.ev.filters = append(r.ev.filters, &filterState{cfg: f})
		ld.fnames[f.Name] = true
	}
	if err := c.Err(); err != nil {
		return nil, nil, err
	}
	// People and definitions do not depend on each other until linking: read them at once.
	var pc validate.Collector
	peopleDone := make(chan error, 1)
	go func() { peopleDone <- ld.loadPeople(ctx, &pc, c) }()
	enumErr := ld.enumerate(ctx, c)
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
		ld.withoutPeople()
	}
	if enumErr != nil {
		return nil, nil, enumErr
	}
	if !ld.noPeople {
		ld.reportManagerMap(c)
	}
	r.Timings.Load = time.Since(start)
	return r, c, nil
}

// validate is the second phase: LDAP groups read in bulk, references resolved, the dependency
// graph built and checked. Every error of the repo is returned together.
func (r *Repo) validate(ctx context.Context, c *validate.Collector) error {
	start := time.Now()
	w, err := r.ev.prefetchLDAP(ctx)
	if err != nil {
		return err
	}
	if w != nil {
		r.warnings = append(r.warnings, *w)
	}
	r.inc.reuseLeaves(&r.ld)
	r.lk.link(ctx, c)
	if r.inc != nil {
		r.inc.countFiles(r.ld.groups)
		r.Reuse = r.inc.counts
	}
	r.warnings = append(r.warnings, c.Warnings()...)
	r.ld.opt.emit(r.warnings)
	r.Timings.Validate = time.Since(start)
	return c.Err()
}

// Calculate evaluates every group exactly once, in dependency order, and returns the result.
// Repeated calls return the same result; it is safe to call from several goroutines.
func (r *Repo) Calculate(ctx context.Context) (*Result, error) {
	r.once.Do(func() { r.result, r.resultErr = r.calculate(ctx) })
	return r.result, r.resultErr
}

func (r *Repo) calculate(ctx context.Context) (*Result, error) {
	start := time.Now()
	if err := r.ev.evalAll(ctx, r.lk.order); err != nil {
		return nil, err
	}
	res, err := newResult(r)
	if r.inc != nil {
		r.Reuse = r.inc.counts
	}
	if err != nil {
		return nil, err
	}
	r.Timings.Calculate = time.Since(start)
	res.Timings = r.Timings
	res.Reuse = r.Reuse
	return res, nil
}

// Config returns the loaded configuration.
func (r *Repo) Config() *config.Config { return r.ld.cfg }

// People returns the interned people of the run.
func (r *Repo) People() *people.Directory { return r.ld.dir }

// Warnings returns every warning found while loading.
func (r *Repo) Warnings() []validate.Warning { return r.warnings }
