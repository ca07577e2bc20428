// Package providers defines how entitlements-go talks to the systems it keeps in step with
// the calculated groups: a provider reads the current state of a whole target (one OU key of
// the config) in bulk and applies a list of changes. The changes themselves come from one
// shared, pure diff (Diff); providers never decide what to change and never reach into the
// calculator.
//
// Optional capabilities are discovered by interface, so a provider implements only what it
// needs: Preparer (create a missing container before writes), PersonWriter (member_of
// attributes on people), Counter (request/connection counters), Coverer (changes that make
// other targets' changes: a GitHub org removal removes the user from the org's teams),
// ModificationReader (who last changed a group, and when: the drift report's attribution).
package providers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/entitlements-go/entitlements/config"
)

// Group is a group as a target system has it (current) or as it should be (desired).
type Group struct {
	DN          string
	CN          string
	Description string
	// Members are uids as spelled by the people data (desired) or the target (current).
	Members []string
	// Metadata of a desired group (gid_number, team_maintainers, ...). Empty for current.
	Metadata map[string]any
	// File is the definition file of a desired group (relative to the base directory), for
	// messages that must name it. Empty for current groups.
	File string
	// Attrs are provider-specific attributes (lower-case names) that a provider compares
	// itself: desired values come from Desire, current ones from Read.
	Attrs map[string][]string
}

// State is the current state of one target.
type State struct {
	// Groups by normalised key (see Key).
	Groups map[string]*Group
	// ContainerMissing is true when the target's container (an LDAP OU) does not exist yet;
	// a Preparer creates it before any group is written.
	ContainerMissing bool
}

// Key normalises a group DN for comparisons: DNs from config and from servers differ in case
// and spacing, and comparing them raw would delete and recreate groups.
func Key(dn string) string { return normalizeDN(dn) }

// Target is one OU key handled by one provider.
type Target struct {
	OU *config.OU
	// Progress, when set, is told how far a running read of the target has come (deploy
	// sets it while it reads the target, when its caller shows progress). Providers call
	// ReportRead rather than this.
	Progress func(ReadProgress)
}

// Factory builds the provider for one OU. A factory may return the same provider for several
// OUs (one LDAP connection pool per server).
type Factory func(ou *config.OU) (Provider, error)

// Provider reads and writes one kind of target.
type Provider interface {
	// Read returns the current state of the whole target in bulk. An error means the state
	// is unknown: nothing is written to the target.
	Read(ctx context.Context, t *Target) (*State, error)
	// Apply performs changes (all of one target). It returns one Outcome per change, never
	// panics, and keeps going after a failed change.
	Apply(ctx context.Context, t *Target, changes []*Change) []Outcome
}

// Desirer is implemented by providers that derive provider-specific desired attributes
// (Group.Attrs) from a calculated group, e.g. an LDAP objectClass or a POSIX gidNumber.
// An error (a posixGroup without gid_number) fails the plan of that group.
type Desirer interface {
	Desire(t *Target, g *Group) error
}

// DesiredReader is implemented by providers that read more cheaply, or more correctly, when
// they know the desired groups (which groups to look up by name, which members can be
// resolved). deploy prefers it over Read and still calls Desire on every group first.
type DesiredReader interface {
	ReadDesired(ctx context.Context, t *Target, desired []*Group) (*State, error)
}

// Preparer is implemented by providers that create the target's container before writes.
type Preparer interface {
	Prepare(ctx context.Context, t *Target) error
}

// Person is one person of the people data, as a Deriver sees it.
type Person struct {
	UID   string
	Attrs map[string]any
}

// DerivedInput is what a Deriver plans from: the calculated groups of its sources (mirror
// groups left out), source by source in the order Sources gave and by DN within each, and
// every person of the people data in uid order.
type DerivedInput struct {
	Groups []*Group
	People []Person
}

// DerivedPlan is the plan of a derived target: its changes (UpdatePerson), how many values
// people hold now (what the removal guard compares removals with), and a fingerprint of
// those values (a saved plan is applied only while it is unchanged).
type DerivedPlan struct {
	Changes     []*Change
	Current     int
	Fingerprint string
}

// Deriver plans the targets of a derived backend type (config.TypeSpec.Derived, such as
// member_of): what they write is computed from the calculated groups of other OUs and the
// people data, not read and diffed group by group. It is part of the backend's description
// (backend.Backend.Derive), not of a provider, so that a plan against simulated providers
// derives the same changes.
type Deriver interface {
	// Sources are the keys of the OUs whose groups the target derives from, or an error
	// when it derives from none.
	Sources(ou *config.OU, cfg *config.Config) ([]string, error)
	// Plan computes the target's changes.
	Plan(ou *config.OU, in DerivedInput) (*DerivedPlan, error)
}

// PersonWriter is implemented by providers of derived targets: they write person attributes
// (member_of) rather than groups.
type PersonWriter interface {
	WritePeople(ctx context.Context, t *Target, changes []*Change) []Outcome
}

// Counter is implemented by providers that count their requests; the values are reported
// after a run (searches, writes, connections opened, ...).
type Counter interface {
	Counters() map[string]int64
}

// DeletePolicy says whether a provider deletes the groups of its target that are no longer
// defined. A provider that does not implement it never deletes a group (fail closed).
type DeletePolicy interface {
	DeletesGroups(t *Target) bool
}

// Coverer is implemented by providers whose changes change other targets too: removing a user
// from a GitHub organization removes them from every team of that organization. After every
// target is planned (and the removal guard has decided), deploy.Build calls Cover of each
// target that will be applied, once for every other planned target. deploy.Apply then applies
// a covering target before the targets it covers, does not send a covered removal whose
// covering change succeeded, and sends it when that change failed or was not applied.
type Coverer interface {
	// Cover returns the changes of another target (other, read by provider otherP) adjusted
	// to the changes of t (mine): the removals that changes of mine make are listed in
	// Change.Covered (they stay in Remove: the access is lost all the same), and adds that
	// changes of mine make impossible are taken out of Add (a change left with nothing to do
	// is dropped). Adjusted changes are new values; others are returned as they are.
	Cover(t *Target, mine []*Change, other *Target, otherP Provider, theirs []*Change) []*Change
}

// Modification is who last modified a group and when, as the target system records it. A
// zero field is one the system does not say.
type Modification struct {
	// By identifies who made the modification, as the system names them (an LDAP bind DN).
	By string
	// At is when it was made.
	At time.Time
}

// ModificationReader is implemented by providers whose systems record who last modified an
// entry and when (LDAP: the modifiersName and modifyTimestamp operational attributes). The
// drift report asks it about the groups that changed outside the tool, to say by whom and
// when; it is never asked on a plan or an apply.
type ModificationReader interface {
	// LastModified returns the last modification of each group of dns that exists and whose
	// system says something about it, by Key of its DN. An error leaves the attribution out;
	// the drift itself is still known.
	LastModified(ctx context.Context, t *Target, dns []string) (map[string]Modification, error)
}

// ChangeKind says what a change does.
type ChangeKind uint8

// The change kinds.
const (
	CreateContainer ChangeKind = iota
	CreateGroup
	UpdateGroup
	DeleteGroup
	UpdatePerson
)

func (k ChangeKind) String() string {
	return [...]string{"create-container", "create", "update", "delete", "update-person"}[k]
}

// Change is one planned write.
type Change struct {
	Kind ChangeKind
	OU   string
	DN   string
	// Desired is the group to create or update to; Current the state read (update, delete).
	Desired, Current *Group
	// Add and Remove are the member differences (sorted), for display and for providers that
	// patch members instead of replacing them.
	Add, Remove []string
	// DescriptionChanged and AttrsChanged say what else differs for an update.
	DescriptionChanged bool
	AttrsChanged       []string
	// Covered are the members of Remove whose removal a change of another target of the plan
	// makes (see Coverer): Apply does not send them when that change succeeded.
	Covered []Cover
	// Person changes (member_of): the person, the attribute and its new values (nil = delete).
	Person    string
	Attribute string
	Values    []string
	OldValues []string
}

// Cover is a removal that a change of another target makes.
type Cover struct {
	Member string
	// By is the change (of another target of the same plan) whose success makes the removal.
	By *Change
}

// CoveredBy returns the change that covers the removal of member, or nil.
func (c *Change) CoveredBy(member string) *Change {
	for _, cv := range c.Covered {
		if strings.EqualFold(cv.Member, member) {
			return cv.By
		}
	}
	return nil
}

// OnlyCovered reports whether everything the change does is made by changes of other
// targets: an update whose only differences are covered removals. Apply sends nothing for it
// when those changes succeed, and plans count it apart (deploy.Plan.Covered).
func (c *Change) OnlyCovered() bool {
	if c.Kind != UpdateGroup || len(c.Covered) == 0 || len(c.Add) > 0 || c.DescriptionChanged || len(c.AttrsChanged) > 0 {
		return false
	}
	for _, m := range c.Remove {
		if c.CoveredBy(m) == nil {
			return false
		}
	}
	return true
}

func (c *Change) String() string {
	switch c.Kind {
	case CreateGroup:
		return fmt.Sprintf("ADD %s to %s (Members: %s)", c.DN, c.OU, strings.Join(c.Add, ","))
	case DeleteGroup:
		return fmt.Sprintf("DELETE %s from %s", c.DN, c.OU)
	case CreateContainer:
		return fmt.Sprintf("ADD %s", c.DN)
	case UpdatePerson:
		return fmt.Sprintf("CHANGE person %s attribute %s", c.Person, c.Attribute)
	}
	var what []string
	if len(c.Add) > 0 || len(c.Remove) > 0 {
		what = append(what, fmt.Sprintf("+%d -%d", len(c.Add), len(c.Remove)))
	}
	if c.DescriptionChanged {
		what = append(what, "description")
	}
	what = append(what, c.AttrsChanged...)
	if len(what) == 0 {
		return fmt.Sprintf("CHANGE %s in %s", c.DN, c.OU)
	}
	return fmt.Sprintf("CHANGE %s in %s (%s)", c.DN, c.OU, strings.Join(what, ", "))
}

// Describe is the change for a write log: what it does and to whom (at most 20 names per
// list, then a count).
func (c *Change) Describe() string {
	switch c.Kind {
	case CreateGroup:
		return fmt.Sprintf("ADD %s to %s (Members: %s)", c.DN, c.OU, names(c.Add))
	case UpdatePerson:
		return fmt.Sprintf("CHANGE person %s attribute %s: %s", c.Person, c.Attribute, names(c.Values))
	case UpdateGroup:
		out := fmt.Sprintf("CHANGE %s in %s", c.DN, c.OU)
		if len(c.Add) > 0 {
			out += " +" + names(c.Add)
		}
		if len(c.Remove) > 0 {
			out += " -" + names(c.Remove)
		}
		if c.DescriptionChanged {
			out += " description"
		}
		for _, a := range c.AttrsChanged {
			out += " " + a
		}
		return out
	}
	return c.String()
}

// names lists members for a log line, at most 20 of them.
func names(s []string) string {
	if len(s) <= 20 {
		return strings.Join(s, ",")
	}
	return strings.Join(s[:20], ",") + fmt.Sprintf(",... (%d in all)", len(s))
}

// Status is the outcome of one change.
type Status uint8

// The outcomes. Unknown means the request may have reached the server but its answer was not
// seen: the change must be re-read before it is tried again, and is never reported applied.
// Covered means nothing was sent because the changes of other targets that cover it (see
// Change.Covered) succeeded: the change is in place.
const (
	Applied Status = iota
	AlreadyInState
	Skipped
	Failed
	Unknown
	Covered
)

func (s Status) String() string {
	return [...]string{"applied", "already-in-state", "skipped", "failed", "unknown", "covered"}[s]
}

// OK reports whether the change is in place.
func (s Status) OK() bool { return s == Applied || s == AlreadyInState || s == Covered }

// Failure reports whether the change failed or may have failed. Skipped is not a failure:
// the provider decided, by configuration, not to make it (a user that does not exist with
// ignore_not_found, for instance) and said why in the outcome's error.
func (s Status) Failure() bool { return s == Failed || s == Unknown }

// ErrStopped is matched (errors.Is) by the errors of changes that were not made because the
// run had to stop for a reason a later run may not have: a run budget of waiting used up. A
// runner reports such a run as stopped (resumable), not failed.
var ErrStopped = errors.New("the apply stopped before its end")

// Outcome is the result of one change.
type Outcome struct {
	Change *Change
	Status Status
	Err    error
}

// sortedCopy returns a sorted copy without duplicates.
func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}
