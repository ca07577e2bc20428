package deploy

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/providers"
)

// FileVersion is the version of the saved-plan format that SavedPlan.WriteTo writes and ReadPlan
// reads.
const FileVersion = 1

// Inputs identify what a plan was calculated from. Apply of a saved plan refuses every
// target when they differ: the reviewed changes were made from other data.
type Inputs struct {
	// Revision is the config repo revision when known (a git commit), informational.
	Revision string `json:"revision,omitempty"`
	// Config is the content digest of the config file and every group file (calc.Digest).
	Config string `json:"config_digest"`
	// People is the content digest of the people data and the manager map.
	People string `json:"people_digest"`
}

// InputsOf returns the inputs of a loaded repo.
func InputsOf(repo *calc.Repo) Inputs {
	d := repo.Digest()
	return Inputs{Config: d.Config, People: d.People}
}

// SavedPlan is a plan written to a file for review, to be applied later (entitlements plan
// --out, apply PLANFILE). It holds, per target, the fingerprint of the current state the
// changes were computed from, and the changes themselves.
type SavedPlan struct {
	Version int    `json:"version"`
	Inputs  Inputs `json:"inputs"`
	// Settings are the options of the program that made the plan, by name (the CLI records
	// the flags that shape a plan: the config path, --now, the guard limits, ...), so that
	// applying the file needs nothing else. This package neither sets nor reads them.
	Settings map[string]string `json:"settings,omitempty"`
	Targets  []SavedTarget     `json:"targets"`
}

// SavedTarget is one target of a saved plan.
type SavedTarget struct {
	OU          string        `json:"ou"`
	Type        string        `json:"type"`
	Fingerprint string        `json:"fingerprint,omitempty"`
	Error       string        `json:"error,omitempty"`
	Changes     []SavedChange `json:"changes"`
	// Estimate is what the apply will cost (TargetPlan.Estimate), for reviewers and
	// pipelines; it is not compared when the plan is applied.
	Estimate *SavedEstimate `json:"estimate,omitempty"`
}

// SavedEstimate is a target's providers.Estimate: writes by kind and the estimated apply
// duration in whole seconds.
type SavedEstimate struct {
	Writes  map[string]int `json:"writes"`
	Seconds int64          `json:"apply_seconds"`
	Notes   []string       `json:"notes,omitempty"`
}

// SavedChange is one change as reviewed. Two plans apply the same writes exactly when their
// saved changes are equal.
type SavedChange struct {
	Kind        string     `json:"kind"`
	DN          string     `json:"dn,omitempty"`
	Add         []string   `json:"add,omitempty"`
	Remove      []string   `json:"remove,omitempty"`
	Description *[2]string `json:"description,omitempty"`
	Attrs       []string   `json:"attributes_changed,omitempty"`
	Person      string     `json:"person,omitempty"`
	Attribute   string     `json:"attribute,omitempty"`
	Values      []string   `json:"values,omitempty"`
	// Covered are the removals (members of Remove) that a change of another target makes.
	Covered []SavedCover `json:"covered,omitempty"`
}

// SavedCover is a covered removal: the member, and the target and group of the change that
// makes it.
type SavedCover struct {
	Member string `json:"member"`
	OU     string `json:"by_ou"`
	DN     string `json:"by_dn"`
}

// SaveChange converts a change to its saved form.
func SaveChange(c *providers.Change) SavedChange {
	sc := SavedChange{Kind: c.Kind.String(), DN: c.DN, Add: c.Add, Remove: c.Remove, Attrs: c.AttrsChanged,
		Person: c.Person, Attribute: c.Attribute, Values: c.Values}
	if c.DescriptionChanged {
		sc.Description = &[2]string{c.Current.Description, c.Desired.Description}
	}
	for _, cv := range c.Covered {
		sc.Covered = append(sc.Covered, SavedCover{Member: cv.Member, OU: cv.By.OU, DN: cv.By.DN})
	}
	return sc
}

// Save returns the plan in its saved form. Timings and counters are left out, so saving the
// same plan twice gives the same bytes.
func (p *Plan) Save(in Inputs) *SavedPlan {
	out := &SavedPlan{Version: FileVersion, Inputs: in, Targets: []SavedTarget{}}
	for _, t := range p.Targets {
		st := SavedTarget{OU: t.OU, Type: t.Type, Fingerprint: t.Fingerprint, Changes: []SavedChange{}}
		if t.Err != nil {
			st.Error = t.Err.Error()
		}
		if e := t.Estimate; e != nil {
			st.Estimate = &SavedEstimate{Writes: e.Writes, Seconds: int64(e.Duration.Round(time.Second) / time.Second), Notes: e.Notes}
		}
		for _, c := range t.Changes {
			st.Changes = append(st.Changes, SaveChange(c))
		}
		out.Targets = append(out.Targets, st)
	}
	return out
}

// WriteTo writes the saved plan as indented JSON.
func (s *SavedPlan) WriteTo(w io.Writer) (int64, error) {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return 0, err
	}
	b = append(b, '\n')
	n, err := w.Write(b)
	return int64(n), err
}

// ReadPlan reads a saved plan and checks its version.
func ReadPlan(r io.Reader) (*SavedPlan, error) {
	var s SavedPlan
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("reading plan file: %w", err)
	}
	if s.Version != FileVersion {
		return nil, fmt.Errorf("plan file version %d is not supported (this build reads version %d)", s.Version, FileVersion)
	}
	return &s, nil
}

// DriftError refuses a target of a saved plan: its state, or the inputs, changed since the
// plan was made. Nothing is written to the target.
type DriftError struct {
	OU     string
	Reason string
}

func (e *DriftError) Error() string {
	return fmt.Sprintf("refused: %s since the plan was made; nothing was written to %s (run plan again and review the new changes)", e.Reason, e.OU)
}

// ErrDrift matches every DriftError with errors.Is.
var ErrDrift = errors.New("plan drift")

// Is makes errors.Is(err, ErrDrift) true for a DriftError.
func (e *DriftError) Is(target error) bool { return target == ErrDrift }

// TargetsError refuses a saved plan whose targets are not exactly those of the config: a
// target missing from the file, one the config does not have, one listed twice or with
// another backend type. Such a file is not the plan a reviewer saw of this config (it was
// edited, or made from another config), so none of it is applied. It matches ErrDrift.
type TargetsError struct {
	// Missing are targets of the config that the plan file lacks; Extra targets of the plan
	// file that the config does not have; Twice targets listed more than once; Retyped
	// "ou: saved type -> config type" for a target whose backend type differs.
	Missing, Extra, Twice, Retyped []string
}

func (e *TargetsError) Error() string {
	var parts []string
	if len(e.Missing) > 0 {
		parts = append(parts, "missing from the plan file: "+strings.Join(e.Missing, ", "))
	}
	if len(e.Extra) > 0 {
		parts = append(parts, "not in the config: "+strings.Join(e.Extra, ", "))
	}
	if len(e.Twice) > 0 {
		parts = append(parts, "twice in the plan file: "+strings.Join(e.Twice, ", "))
	}
	parts = append(parts, e.Retyped...)
	return "refused: the plan file's targets are not the config's (" + strings.Join(parts, "; ") +
		"); nothing was applied (run plan again and review the whole plan)"
}

// Is makes errors.Is(err, ErrDrift) true for a TargetsError.
func (e *TargetsError) Is(target error) bool { return target == ErrDrift }

// checkTargets compares the targets of a saved plan with those of a fresh one (every OU of
// the config that is not dummy, in config order).
func checkTargets(saved *SavedPlan, fresh *Plan) *TargetsError {
	e := &TargetsError{}
	have := map[string]string{}
	for _, t := range fresh.Targets {
		have[t.OU] = t.Type
	}
	seen := map[string]bool{}
	for _, st := range saved.Targets {
		typ, ok := have[st.OU]
		switch {
		case seen[st.OU]:
			if !slices.Contains(e.Twice, st.OU) {
				e.Twice = append(e.Twice, st.OU)
			}
		case !ok:
			e.Extra = append(e.Extra, st.OU)
		case st.Type != typ:
			e.Retyped = append(e.Retyped, fmt.Sprintf("%s is %s in the plan file but %s in the config", st.OU, st.Type, typ))
		}
		seen[st.OU] = true
	}
	for _, t := range fresh.Targets {
		if !seen[t.OU] {
			e.Missing = append(e.Missing, t.OU)
		}
	}
	if len(e.Missing)+len(e.Extra)+len(e.Twice)+len(e.Retyped) == 0 {
		return nil
	}
	for _, l := range [][]string{e.Missing, e.Extra, e.Twice} {
		slices.Sort(l)
	}
	return e
}

// Restrict limits fresh, a plan just built from the current inputs and states, to the
// changes of saved: every target of fresh whose inputs, state fingerprint or changes differ
// from the saved plan gets a DriftError and is not applied. What Apply then writes is exactly
// what was reviewed.
//
// The saved plan must have exactly the targets of fresh (the config's): otherwise Restrict
// returns a *TargetsError and gives every target of fresh that error, so that nothing is
// applied even by a caller that ignores the result. Dropping the targets a file lacks would
// apply an edited plan as if it had been reviewed whole, and leave those targets' access as
// it is while the audit log and the next predictive plan took the config for applied.
func (fresh *Plan) Restrict(saved *SavedPlan, current Inputs) error {
	byOU, inputs, err := fresh.holdTo(saved, current)
	if err != nil {
		return err
	}
	for _, t := range fresh.Targets {
		st := byOU[t.OU]
		reason := inputs
		switch {
		case reason != "":
		case st.Error != "":
			t.Err = fmt.Errorf("not applied: the saved plan has an error for this target: %s", st.Error)
			continue
		case t.Err != nil:
			continue // cannot be read or planned now: the error says why
		case st.Fingerprint != t.Fingerprint:
			reason = fmt.Sprintf("the current state of %s changed (fingerprint %s, planned from %s)", t.OU, short(t.Fingerprint), short(st.Fingerprint))
		case !sameChanges(st.Changes, t.Changes):
			reason = fmt.Sprintf("the changes for %s differ from the saved plan", t.OU)
		}
		if reason != "" {
			t.Err = &DriftError{OU: t.OU, Reason: reason}
		}
	}
	return nil
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

func sameChanges(saved []SavedChange, now []*providers.Change) bool {
	if len(saved) != len(now) {
		return false
	}
	for i, c := range now {
		a, _ := json.Marshal(saved[i])
		b, _ := json.Marshal(SaveChange(c))
		if string(a) != string(b) {
			return false
		}
	}
	return true
}

// Fingerprint is a digest of a target's current state: every group's DN, description,
// members (lower-cased, sorted) and provider attributes, and whether the container exists.
// Two reads of an unchanged target give the same fingerprint.
func Fingerprint(st *providers.State) string {
	h := sha256.New()
	if st.ContainerMissing {
		h.Write([]byte("container-missing\n"))
	}
	keys := make([]string, 0, len(st.Groups))
	for k := range st.Groups {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		g := st.Groups[k]
		fmt.Fprintf(h, "group %q %q\n", k, g.Description)
		members := make([]string, len(g.Members))
		for i, m := range g.Members {
			members[i] = strings.ToLower(m)
		}
		slices.Sort(members)
		for _, m := range members {
			fmt.Fprintf(h, " m %q\n", m)
		}
		attrs := make([]string, 0, len(g.Attrs))
		for a := range g.Attrs {
			attrs = append(attrs, a)
		}
		slices.Sort(attrs)
		for _, a := range attrs {
			vals := slices.Clone(g.Attrs[a])
			slices.SortFunc(vals, func(x, y string) int { return cmp.Compare(strings.ToLower(x), strings.ToLower(y)) })
			fmt.Fprintf(h, " a %q %q\n", a, vals)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// holdTo is what Restrict and Resume check first: the saved plan's targets are exactly
// fresh's (else every target of fresh gets the *TargetsError, which is returned), and the
// inputs it was made from are the current ones (inputs says which changed, "" when none).
// byOU indexes the saved targets.
func (fresh *Plan) holdTo(saved *SavedPlan, current Inputs) (byOU map[string]*SavedTarget, inputs string, err error) {
	if te := checkTargets(saved, fresh); te != nil {
		for _, t := range fresh.Targets {
			t.Err = te
		}
		return nil, "", te
	}
	switch {
	case saved.Inputs.Config != current.Config:
		inputs = "the config repo (group files or entitlements.yaml) changed"
	case saved.Inputs.People != current.People:
		inputs = "the people data or the manager map changed"
	}
	byOU = make(map[string]*SavedTarget, len(saved.Targets))
	for i := range saved.Targets {
		byOU[saved.Targets[i].OU] = &saved.Targets[i]
	}
	return byOU, inputs, nil
}
