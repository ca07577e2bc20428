package calc

import (
	"context"
	"io/fs"
	"log/slog"
	"runtime"
	"time"

	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/people"
	"github.com/entitlements-go/entitlements/validate"
)

// Method is a custom rule method registered by an embedder (the Go replacement for Ruby rule
// code). It is called once per distinct value per run, during validation, and returns the uids
// of the members; unknown uids are ignored, letter case does not matter. A returned error is
// reported as a validation error at every line that uses the value.
type Method func(ctx context.Context, value string, dir *people.Directory) ([]string, error)

// FilterClass computes the population of a custom filter class (the people the filter removes
// unless a group opts out). It is called once per filter per run.
type FilterClass func(ctx context.Context, f *config.Filter, dir *people.Directory) ([]string, error)

// PeopleLoader reads a people source the engine cannot read by itself (type ldap, or the ldap
// components of a combined source). Providers supply one.
type PeopleLoader func(ctx context.Context, src *config.PeopleSource) ([]people.Person, error)

// Options configure a calculation. The zero value is the documented default for every field;
// fields left unset keep their defaults.
type Options struct {
	// Now is "today" for every expiration (only its UTC date matters). Default: time.Now().
	Now time.Time
	// IgnoreExpirations disables per-line/per-rule/filter expirations and the whole-file
	// modifier (the config file's ignore_expirations does the same). Default false.
	IgnoreExpirations bool
	// LDAPGroups serves ldap_group rules and MemberOfLDAPGroup filters. Default: none, and a
	// config that needs LDAP groups fails validation with a clear error.
	LDAPGroups LDAPGroupReader
	// LDAPGroupsFor builds the reader from the loaded config (for readers that need the
	// ldap_group extra's settings). Used when LDAPGroups is nil.
	LDAPGroupsFor func(cfg *config.Config) (LDAPGroupReader, error)
	// People reads people sources other than YAML. Default: none (only yaml sources work).
	People PeopleLoader
	// Methods adds custom rule methods by name. Built-in names cannot be replaced.
	Methods map[string]Method
	// FilterClasses adds custom filter classes, keyed by the `class:` string of the config.
	FilterClasses map[string]FilterClass
	// Types are the backend types the config's OU entries may use (see config.TypeSpec).
	// Default: none, and every OU entry is refused: pass backends.Types() for the built-in
	// types (ldap, member_of, dummy, github_org, github_team, aad), plus any of your own.
	Types []config.TypeSpec
	// Getenv serves environment substitution in the config file. Default: os.LookupEnv.
	Getenv func(string) (string, bool)
	// Config, when set, is the configuration of the run, already loaded (LoadConfig, or
	// another Repo's Config()): the config file at the path given to Load is not read, and
	// only the group files, people data and manager map come from the tree. Its paths must
	// name files of FS (or of the operating system) as they did when it was loaded, so a tree
	// of the same layout can be calculated with another tree's configuration: `entitlements
	// diff` calculates a pull request's head with the base revision's configuration, so that
	// the head is data and never chooses which environment variables are read, which servers
	// are contacted or with which credentials. The Config is only read. Default: nil, the
	// config file is loaded.
	Config *config.Config
	// BaseDir is the directory error paths are relative to. Default: the working directory.
	BaseDir string
	// Strict also validates files that nothing uses (unreferenced files of dummy OUs), which the
	// reference never opens. Default false: such files only produce warnings.
	Strict bool
	// FS, when set, is where the repository is read from instead of the operating system
	// (see LoadFS). Default: the operating system.
	FS fs.FS
	// WorkDir is the working directory inside FS: people files are resolved against it, as
	// the reference resolves them against the process's. Default: the root of FS.
	WorkDir string
	// Incremental reuses the work of a Repo loaded from another version of the same
	// repository (see Incremental). Default: none, everything is read and computed.
	Incremental *Incremental
	// Parallelism bounds the goroutines used to read and parse files (default 4×GOMAXPROCS)
	// and, with GOMAXPROCS, those that write the member lists of the result.
	Parallelism int
	// Logger receives debug output, and warnings when OnWarning is nil. Default: discard.
	Logger *slog.Logger
	// MaxFileSize caps the size of every file the run reads (config, group files, people data,
	// manager map), in bytes. Default 0: 64 MiB; negative: no cap.
	// Only regular files are ever read: devices, FIFOs and sockets are refused.
	MaxFileSize int64
	// AllowSymlinksOutside lets the files of the repository be symlinks that resolve outside
	// the config tree: group files, the people file and the manager map outside the
	// configuration_path, the config file's directory and the directory they are named in; the
	// config file outside its own directory. Default false: such a file is refused
	// (validate.ErrOutsideTree), so that a link cannot make the run read (and quote) a file
	// elsewhere on the machine.
	AllowSymlinksOutside bool
	// AllowEmptyPeople accepts a people source that yields no people. Default false: a source
	// that suddenly returns nobody (an empty file, an LDAP base that matches nothing) would
	// otherwise empty every group of every target; the run fails with ErrNoPeople instead.
	// A source of type dummy is always allowed to be empty.
	AllowEmptyPeople bool
	// OnWarning is called for every warning of a load (a duplicate YAML key, a username that
	// names nobody...), in path and line order, once loading ends, also when it fails.
	// Default: each warning is logged at level Warn on Logger.
	OnWarning func(validate.Warning)
}

// emit hands warnings to OnWarning (or the logger).
func (o *Options) emit(ws []validate.Warning) {
	for _, w := range ws {
		if o.OnWarning != nil {
			o.OnWarning(w)
		} else {
			o.Logger.Warn(w.String())
		}
	}
}

func (o Options) withDefaults() Options {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.Parallelism <= 0 {
		// Reading files is I/O-bound: a few more workers than cores keep the cores busy.
		o.Parallelism = 4 * runtime.GOMAXPROCS(0)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}
