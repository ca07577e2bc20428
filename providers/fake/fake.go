// Package fake is an in-memory provider for tests, for users' tests of tools that embed
// entitlements-go, and for offline plans of the bundled example. It keeps state per OU,
// records every call, and can be told to fail reads (per OU) or writes (per change).
package fake

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/entitlements-go/entitlements/internal/safefile"
	"github.com/entitlements-go/entitlements/providers"
)

// Call is one recorded call.
type Call struct {
	Op     string // read, apply, prepare, write-people
	OU     string
	Change *providers.Change // for apply
}

// Provider is the fake. Its zero value is not usable; call New.
type Provider struct {
	mu       sync.Mutex
	groups   map[string]map[string]*providers.Group // OU key → normalised DN → group
	missing  map[string]bool                        // OU key → container missing
	people   map[string]map[string][]string         // person → attribute → values
	calls    []Call
	readErr  map[string]error
	applyErr func(*providers.Change) error
	deletes  bool
}

// New returns an empty fake that deletes groups that are no longer defined (like LDAP).
func New() *Provider {
	return &Provider{groups: map[string]map[string]*providers.Group{}, missing: map[string]bool{},
		people: map[string]map[string][]string{}, readErr: map[string]error{}, deletes: true}
}

// Seed adds current groups to an OU.
func (p *Provider) Seed(ou string, gs ...*providers.Group) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.groups[ou] == nil {
		p.groups[ou] = map[string]*providers.Group{}
	}
	for _, g := range gs {
		c := clone(g)
		p.groups[ou][providers.Key(g.DN)] = c
	}
}

// SetContainerMissing makes the OU's container absent until a Prepare creates it.
func (p *Provider) SetContainerMissing(ou string) {
	p.mu.Lock()
	p.missing[ou] = true
	p.mu.Unlock()
}

// FailRead makes reads of an OU fail with err (nil clears it).
func (p *Provider) FailRead(ou string, err error) {
	p.mu.Lock()
	p.readErr[ou] = err
	p.mu.Unlock()
}

// FailApply makes every change for which fn returns an error fail with it.
func (p *Provider) FailApply(fn func(*providers.Change) error) {
	p.mu.Lock()
	p.applyErr = fn
	p.mu.Unlock()
}

// SetDeletes says whether groups that are no longer defined are deleted (default true).
func (p *Provider) SetDeletes(v bool) { p.deletes = v }

// The capabilities the fake provider claims (all of those a provider can have).
var (
	_ providers.Provider     = (*Provider)(nil)
	_ providers.Preparer     = (*Provider)(nil)
	_ providers.PersonWriter = (*Provider)(nil)
	_ providers.DeletePolicy = (*Provider)(nil)
)

// DeletesGroups implements providers.DeletePolicy.
func (p *Provider) DeletesGroups(*providers.Target) bool { return p.deletes }

// Calls returns the recorded calls.
func (p *Provider) Calls() []Call {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.calls)
}

// Groups returns copies of an OU's groups sorted by DN.
func (p *Provider) Groups(ou string) []*providers.Group {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*providers.Group
	for _, g := range p.groups[ou] {
		out = append(out, clone(g))
	}
	slices.SortFunc(out, func(a, b *providers.Group) int { return strings.Compare(a.DN, b.DN) })
	return out
}

// Read implements providers.Provider.
func (p *Provider) Read(ctx context.Context, t *providers.Target) (*providers.State, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, Call{Op: "read", OU: t.OU.Key})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := p.readErr[t.OU.Key]; err != nil {
		return nil, err
	}
	st := &providers.State{Groups: map[string]*providers.Group{}, ContainerMissing: p.missing[t.OU.Key]}
	for k, g := range p.groups[t.OU.Key] {
		st.Groups[k] = clone(g)
	}
	return st, nil
}

// Prepare implements providers.Preparer.
func (p *Provider) Prepare(_ context.Context, t *providers.Target) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, Call{Op: "prepare", OU: t.OU.Key})
	delete(p.missing, t.OU.Key)
	return nil
}

// Apply implements providers.Provider.
func (p *Provider) Apply(ctx context.Context, t *providers.Target, changes []*providers.Change) []providers.Outcome {
	out := make([]providers.Outcome, 0, len(changes))
	for _, c := range changes {
		out = append(out, p.apply(ctx, t, c))
	}
	return out
}

func (p *Provider) apply(ctx context.Context, t *providers.Target, c *providers.Change) providers.Outcome {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, Call{Op: "apply", OU: t.OU.Key, Change: c})
	if err := ctx.Err(); err != nil {
		return providers.Outcome{Change: c, Status: providers.Failed, Err: fmt.Errorf("not applied: %w", err)}
	}
	if p.applyErr != nil {
		if err := p.applyErr(c); err != nil {
			return providers.Outcome{Change: c, Status: providers.Failed, Err: err}
		}
	}
	if p.missing[t.OU.Key] && c.Kind != providers.CreateContainer {
		return providers.Outcome{Change: c, Status: providers.Failed, Err: fmt.Errorf("container of %s does not exist", t.OU.Key)}
	}
	if p.groups[t.OU.Key] == nil {
		p.groups[t.OU.Key] = map[string]*providers.Group{}
	}
	k := providers.Key(c.DN)
	switch c.Kind {
	case providers.CreateGroup, providers.UpdateGroup:
		g := clone(c.Desired)
		g.Metadata = nil
		p.groups[t.OU.Key][k] = g
	case providers.DeleteGroup:
		if _, ok := p.groups[t.OU.Key][k]; !ok {
			return providers.Outcome{Change: c, Status: providers.AlreadyInState}
		}
		delete(p.groups[t.OU.Key], k)
	case providers.CreateContainer:
		delete(p.missing, t.OU.Key)
	}
	return providers.Outcome{Change: c, Status: providers.Applied}
}

// WritePeople implements providers.PersonWriter.
func (p *Provider) WritePeople(_ context.Context, t *providers.Target, changes []*providers.Change) []providers.Outcome {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]providers.Outcome, 0, len(changes))
	for _, c := range changes {
		p.calls = append(p.calls, Call{Op: "write-people", OU: t.OU.Key, Change: c})
		if p.applyErr != nil {
			if err := p.applyErr(c); err != nil {
				out = append(out, providers.Outcome{Change: c, Status: providers.Failed, Err: err})
				continue
			}
		}
		if p.people[c.Person] == nil {
			p.people[c.Person] = map[string][]string{}
		}
		p.people[c.Person][c.Attribute] = slices.Clone(c.Values)
		out = append(out, providers.Outcome{Change: c, Status: providers.Applied})
	}
	return out
}

// PersonAttribute returns what WritePeople last wrote for a person's attribute.
func (p *Provider) PersonAttribute(person, attr string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.people[person][attr])
}

func clone(g *providers.Group) *providers.Group {
	c := *g
	c.Members = slices.Clone(g.Members)
	if g.Attrs != nil {
		c.Attrs = make(map[string][]string, len(g.Attrs))
		for k, v := range g.Attrs {
			c.Attrs[k] = slices.Clone(v)
		}
	}
	return &c
}

// stateFile is the canonical JSON of `entitlements calc`, so a calc output can seed the fake.
type stateFile struct {
	Groups map[string]struct {
		DN          *string  `json:"dn"`
		Description string   `json:"description"`
		Members     []string `json:"members"`
	} `json:"groups"`
}

// LoadState seeds a new fake from a state file in the canonical calc JSON format: keys are
// "<OU key>/<cn>"; the OU key is everything before the last slash.
func LoadState(path string) (*Provider, error) {
	data, err := safefile.Read(path, safefile.Options{})
	if err != nil {
		return nil, fmt.Errorf("fake state: %w", err)
	}
	var sf stateFile
	if err := json.Unmarshal(data, &sf); err != nil {
		return nil, fmt.Errorf("fake state %s: %w", path, err)
	}
	p := New()
	for key, g := range sf.Groups {
		i := strings.LastIndexByte(key, '/')
		if i <= 0 {
			return nil, fmt.Errorf("fake state %s: group key %q is not <ou>/<cn>", path, key)
		}
		dn := "cn=" + key[i+1:]
		if g.DN != nil {
			dn = *g.DN
		}
		p.Seed(key[:i], &providers.Group{DN: dn, CN: key[i+1:], Description: g.Description, Members: g.Members})
	}
	return p, nil
}
