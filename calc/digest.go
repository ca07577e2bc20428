package calc

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/entitlements-go/entitlements/internal/safefile"
)

// Digest identifies the inputs of a Repo by content, so that a saved plan can tell whether
// the repo it was made from is still the one being applied.
type Digest struct {
	// Config covers entitlements.yaml and every group file the run read (path and content).
	Config string
	// People covers the people data (every uid and attribute) and the manager map.
	People string
}

// Digest returns the content digests of the repo's inputs.
func (r *Repo) Digest() Digest {
	h := sha256.New()
	cfgData, err := r.ld.fsys.ReadFile(r.ld.cfg.File, safefile.Options{MaxSize: -1})
	if err != nil {
		cfgData = []byte(err.Error())
	}
	sum := sha256.Sum256(cfgData)
	fmt.Fprintf(h, "%q %x\n", r.ld.cfg.Rel(r.ld.cfg.File), sum)
	keys := slices.Sorted(maps.Keys(r.ld.groups))
	for _, k := range keys {
		g := r.ld.groups[k]
		fmt.Fprintf(h, "%q %q %x\n", k, g.rel, g.sum)
	}
	var d Digest
	d.Config = hex.EncodeToString(h.Sum(nil))
	h = sha256.New()
	if r.ld.dir != nil {
		for _, uid := range r.ld.dir.UIDs() {
			id, _ := r.ld.dir.Lookup(uid)
			attrs, _ := json.Marshal(r.ld.dir.Person(id).Attrs) // map keys are sorted
			fmt.Fprintf(h, "%q %s\n", uid, attrs)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(r.ld.mm)) {
		if m := r.ld.mm[k]; m.None {
			fmt.Fprintf(h, "mgr %q none\n", k)
		} else {
			fmt.Fprintf(h, "mgr %q %q\n", k, m.UID)
		}
	}
	d.People = hex.EncodeToString(h.Sum(nil))
	return d
}
