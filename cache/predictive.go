package cache

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/entitlements-go/entitlements/internal/dn"
	"github.com/entitlements-go/entitlements/internal/safefile"
)

// PredictiveEntry is the last successfully applied state of one group.
type PredictiveEntry struct {
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
}

// LoadPredictive reads a state directory. A missing directory is an error: a typo must not
// silently turn the cache off.
func LoadPredictive(dir string) (*Predictive, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("predictive state directory %q: %w", dir, err)
	}
	p := &Predictive{entries: map[string]*PredictiveEntry{}, invalidated: map[string]bool{}}
	for _, e := range ents {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		data, err := safefile.Read(filepath.Join(dir, e.Name()), safefile.Options{})
		if err != nil {
			return nil, fmt.Errorf("predictive state: %w", err)
		}
		ent := &PredictiveEntry{Metadata: map[string]string{}}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			line := strings.ToLower(strings.TrimSpace(sc.Text()))
			switch {
			case line == "" || strings.HasPrefix(line, "#"):
				continue // a case with a statement, so that coverage tools see it run
			case strings.HasPrefix(line, "metadata_"):
				k, v, _ := strings.Cut(strings.TrimPrefix(line, "metadata_"), "=")
				ent.Metadata[k] = v
			default:
				ent.Members = append(ent.Members, dn.FirstValue(line))
			}
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("predictive state %s: %w", e.Name(), err)
		}
		slices.Sort(ent.Members)
		p.entries[dn.Normalize(e.Name())] = ent
	}
	return p, nil
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

// WritePredictive records the applied state of one group in dir (members lower-cased and
// sorted, then sorted metadata lines), in the format LoadPredictive reads. Only write groups
// whose existence the provider confirmed: a missing file forces a real read, which is how a
// group that does not exist yet gets created.
func WritePredictive(dir, groupDN string, members []string, metadata map[string]string) error {
	var b strings.Builder
	low := make([]string, len(members))
	for i, m := range members {
		low[i] = strings.ToLower(m)
	}
	slices.Sort(low)
	for _, m := range low {
		b.WriteString(m + "\n")
	}
	if len(low) == 0 {
		b.WriteString("# No members\n")
	}
	keys := make([]string, 0, len(metadata))
	for k := range metadata {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "metadata_%s=%s\n", k, metadata[k])
	}
	if strings.ContainsAny(groupDN, "/\x00") {
		return fmt.Errorf("group DN %q cannot be a file name", groupDN)
	}
	return os.WriteFile(filepath.Join(dir, groupDN), []byte(b.String()), 0o644)
}
