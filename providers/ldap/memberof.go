package ldap

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/internal/dn"
	"github.com/entitlements-go/entitlements/providers"
)

// memberOf plans member_of targets (the reference's memberOf emulator): every person's
// memberof_attribute lists the DNs of the groups of the listed OUs that contain them.
type memberOf struct{}

var _ providers.Deriver = memberOf{}

// Sources implements providers.Deriver: the listed OUs that are configured, enumerate their
// groups and are no mirrors (the reference's emulator never sees mirror OUs).
func (memberOf) Sources(ou *config.OU, cfg *config.Config) ([]string, error) {
	var listed, all []string
	for _, it := range ou.Settings.Get("ou").Items() {
		k := it.Text()
		all = append(all, k)
		if o := cfg.OU(k); o != nil && o.Mirror == "" && o.Spec.Enumerates {
			listed = append(listed, k)
		}
	}
	if len(listed) == 0 {
		return nil, fmt.Errorf("memberOf emulator found no OUs matching: %s", strings.Join(all, ", "))
	}
	return listed, nil
}

// Plan implements providers.Deriver. People whose value does not change produce no change.
func (memberOf) Plan(ou *config.OU, in providers.DerivedInput) (*providers.DerivedPlan, error) {
	attr := ou.Settings.Get("memberof_attribute").Text()
	want := map[string][]string{}
	for _, g := range in.Groups {
		for _, m := range g.Members {
			want[m] = append(want[m], g.DN)
		}
	}
	out := &providers.DerivedPlan{}
	h := sha256.New()
	for _, p := range in.People {
		old := attrValues(p.Attrs, attr)
		out.Current += len(old)
		sorted := slices.Clone(old)
		slices.Sort(sorted)
		fmt.Fprintf(h, "%q %q\n", p.UID, sorted)
		nw := want[p.UID]
		if sameDNs(old, nw) {
			continue
		}
		out.Changes = append(out.Changes, &providers.Change{Kind: providers.UpdatePerson, OU: ou.Key, Person: p.UID,
			Attribute: attr, Values: nw, OldValues: old})
	}
	out.Fingerprint = hex.EncodeToString(h.Sum(nil))
	return out, nil
}

// attrValues reads a person attribute, whatever the letter case of its name.
func attrValues(attrs map[string]any, name string) []string {
	for k, v := range attrs {
		if !strings.EqualFold(k, name) {
			continue
		}
		switch x := v.(type) {
		case string:
			return []string{x}
		case []any:
			out := make([]string, 0, len(x))
			for _, e := range x {
				out = append(out, fmt.Sprint(e))
			}
			return out
		case []string:
			return x
		}
	}
	return nil
}

// sameDNs compares two lists of DNs as sets of normalised DNs: a server that spells
// `CN=x,OU=y` must not make every person differ on every run.
func sameDNs(a, b []string) bool {
	norm := func(in []string) []string {
		out := make([]string, len(in))
		for i, v := range in {
			out[i] = dn.Normalize(v)
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	return slices.Equal(norm(a), norm(b))
}
