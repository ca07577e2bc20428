package cache

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/entitlements-go/entitlements/internal/dn"
	"github.com/entitlements-go/entitlements/internal/safefile"
)

// PredictiveEntry is the last successfully applied state of one group.
type PredictiveEntry struct {
	// DN is the group's DN as the file's path spells it (DNFromPath).
	DN       string
	Members  []string          // lower-cased member ids
	Metadata map[string]string // metadata_<key>=<value> lines
}

// Predictive is the predictive cache: the state a previous run applied, trusted as the
// current state without asking the provider. A provider that finds a non-empty diff against a
// cached entry must Invalidate it and read the real state (in one bulk read): only diffs based
// on real data may become changes. Drift made outside the tool is not seen while the
// calculated state equals the cached one; a full run (no cache) is the cure.
//
// The directory format is the reference's: one file per group named by its DN; lines are
// trimmed and lower-cased, `#` lines are comments, `metadata_<k>=<v>` lines are metadata,
// every other non-blank line is a member (a DN-looking member is reduced to its first RDN
// value).
type Predictive struct {
	mu          sync.Mutex
	entries     map[string]*PredictiveEntry // by normalised DN
	invalidated map[string]bool
	served      map[string]bool // entries Lookup returned
}

// LoadPredictive reads a state directory, in either layout: the flat one (one file per
// group, named by its DN) or the audit log's nested tree (the DN's RDNs reversed as path
// components, `dc=com/dc=github/ou=teams/cn=t`, see PathFromDN), so a checkout of the audit
// log repo is usable as it is. The directory is written by others: it is read as
// StateFiles lists it (dot entries and README.md skipped; a symbolic link or any other
// entry that is neither a file nor a directory is an error naming it), each file inside the
// directory only and within the size cap of every input (64 MiB). A missing directory is an error: a typo
// must not silently turn the cache off.
func LoadPredictive(dir string) (*Predictive, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("predictive state directory %q: %w", dir, err)
	}
	defer root.Close()
	rels, err := StateFiles(root)
	if err != nil {
		return nil, fmt.Errorf("predictive state directory %q: %w", dir, err)
	}
	p := &Predictive{entries: map[string]*PredictiveEntry{}, invalidated: map[string]bool{}, served: map[string]bool{}}
	// Tens of thousands of small files: reading several at once overlaps the waits for the
	// disk, which dominate on a cold cache.
	ents := make([]*PredictiveEntry, len(rels))
	var eg errgroup.Group
	eg.SetLimit(8)
	for i, rel := range rels {
		eg.Go(func() error {
			ent, err := readEntry(root, rel)
			if err != nil {
				return fmt.Errorf("predictive state: %w", err)
			}
			ents[i] = ent
			return nil
		})
	}
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	for i, rel := range rels {
		ents[i].DN = DNFromPath(rel)
		p.entries[dn.Normalize(ents[i].DN)] = ents[i]
	}
	return p, nil
}

// StateFiles lists the group files of a state tree (the audit log checkout, the predictive
// state directory), as slash-separated paths relative to root, in lexical order. Entries
// whose name starts with '.' (.git) and README.md files are skipped whatever they are (they
// are never read or written); every other entry must be a directory or a regular file: a
// symbolic link (wherever it points), FIFO, socket or device is an error naming it, since
// the tree is written by others and is never read or written through a link.
func StateFiles(root *os.Root) ([]string, error) {
	var rels []string
	err := fs.WalkDir(root.FS(), ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") || d.Name() == "README.md" {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if err := safefile.CheckEntry(filepath.Join(root.Name(), filepath.FromSlash(rel)), d.Type()); err != nil {
			return err
		}
		if !d.IsDir() {
			rels = append(rels, rel)
		}
		return nil
	})
	return rels, err
}

func readEntry(root *os.Root, rel string) (*PredictiveEntry, error) {
	data, err := safefile.ReadIn(root, rel, safefile.Options{})
	if err != nil {
		return nil, err
	}
	ent := &PredictiveEntry{Metadata: map[string]string{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := strings.ToLower(strings.TrimSpace(sc.Text()))
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "metadata_"):
			k, v, _ := strings.Cut(strings.TrimPrefix(line, "metadata_"), "=")
			ent.Metadata[k] = v
		default:
			ent.Members = append(ent.Members, dn.FirstValue(line))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	slices.Sort(ent.Members)
	return ent, nil
}

// Hits is the number of groups trusted from the state in this run: entries looked up and not
// invalidated afterwards.
func (p *Predictive) Hits() int {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for k := range p.served {
		if !p.invalidated[k] {
			n++
		}
	}
	return n
}

// Len is the number of groups in the state.
func (p *Predictive) Len() int {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.entries)
}

// Entries returns every group of the state, ordered by normalised DN, whether or not it was
// invalidated in this run: the whole last applied state, for a comparison with what the
// services hold now (package drift). The entries are shared: do not modify them.
func (p *Predictive) Entries() []*PredictiveEntry {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	keys := slices.Sorted(maps.Keys(p.entries))
	out := make([]*PredictiveEntry, len(keys))
	for i, k := range keys {
		out[i] = p.entries[k]
	}
	return out
}

// Lookup returns the cached state of a group, unless it was invalidated in this run.
func (p *Predictive) Lookup(groupDN string) (*PredictiveEntry, bool) {
	if p == nil {
		return nil, false
	}
	k := dn.Normalize(groupDN)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.invalidated[k] {
		return nil, false
	}
	e, ok := p.entries[k]
	if ok {
		p.served[k] = true
	}
	return e, ok
}

// Invalidate stops serving a group from the cache for the rest of the run.
func (p *Predictive) Invalidate(groupDN string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.invalidated[dn.Normalize(groupDN)] = true
	p.mu.Unlock()
}
