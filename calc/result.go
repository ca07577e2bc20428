package calc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/entitlements-go/entitlements/internal/dn"
	"github.com/entitlements-go/entitlements/people"
	"github.com/entitlements-go/entitlements/validate"
)

// Group is one calculated group.
type Group struct {
	// Key is "<OU key>/<cn>".
	Key, OU, CN string
	// DN is "cn=<cn>,<OU base>", or "" for an OU without a base.
	DN          string
	Description string
	// Metadata is the file's metadata (strings for .txt, YAML types for .yaml) plus
	// no_members_ok: true when a whole-file expiration emptied the group.
	Metadata map[string]any
	// Members are uids spelled as in the people data, sorted by byte value.
	Members []string
	// File is the definition file (relative to the base directory).
	File string
	// Type is the OU's backend type; Mirror is true for a mirror OU's copy.
	Type   string
	Mirror bool
}

// Result is the outcome of a calculation.
type Result struct {
	Groups  []*Group // sorted by Key
	Timings Timings
	Reuse   Reuse // what an incremental load took from its base

	repo   *Repo
	byKey  map[string]*Group
	finals map[*group]*roaring.Bitmap
	// groupOf is the definition behind each output group (Explain).
	groupOf map[string]*group
}

func newResult(r *Repo) (*Result, error) {
	res := &Result{repo: r, byKey: make(map[string]*Group, len(r.lk.outputs)),
		finals: make(map[*group]*roaring.Bitmap, len(r.lk.outputs)), groupOf: make(map[string]*group, len(r.lk.outputs))}
	flagged := map[*group]bool{}
	var pending []memberFill
	var errs validate.Collector
	for _, o := range r.lk.outputs {
		g := o.g
		key := g.key // "ouKey/cn" of the group's own OU; a mirror's copy has its own key
		if o.ou != g.ou {
			key = o.ou.Key + "/" + g.cn
		}
		if _, dup := res.groupOf[key]; !dup {
			res.groupOf[key] = g
		}
		if fin, out := r.inc.reusedOutput(g, key, o.mirror); out != nil {
			r.inc.counts.Outputs++
			res.finals[g] = fin
			res.Groups = append(res.Groups, out)
			res.byKey[key] = out
			continue
		}
		fin, ok := res.finals[g]
		if !ok {
			var emptied bool
			var err *validate.Error
			fin, emptied, err = r.ev.final(g)
			if err == nil && fin.IsEmpty() && !emptied && noMembersForbidden(g.def) {
				// The reference raises as soon as it reads the members of such a group.
				err = &validate.Error{Path: g.rel, Kind: validate.KindNoMembers,
					Msg: fmt.Sprintf("The group %s has no members! (metadata no_members_ok is false)", g.key)}
			}
			if err != nil {
				if o.ou.Spec.Enumerates || r.ld.opt.Strict {
					errs.AddError(err)
				} else {
					// A dummy group is only in the output for inspection: the reference never
					// filters it, so its broken list cannot fail the run.
					w := validate.Warning{Path: err.Path, Line: err.Line, Msg: "group left out of the result: " + err.Msg}
					r.warnings = append(r.warnings, w)
					// Load has logged its warnings already: this one is found while calculating.
					r.ld.opt.Logger.Warn(w.String())
				}
				fin = nil
			}
			res.finals[g] = fin
			flagged[g] = emptied
		}
		if fin == nil {
			continue
		}
		out := &Group{Key: key, OU: o.ou.Key, CN: g.cn, File: g.rel, Type: o.ou.Type, Mirror: o.mirror}
		if o.ou.Base != "" {
			out.DN = groupDN(g.cn, o.ou.Base)
		}
		out.Description = g.def.description
		if out.Description == "" {
			out.Description = g.cn
		}
		hint := len(g.def.metadata)
		if flagged[g] {
			hint++
		}
		out.Metadata = make(map[string]any, hint)
		for _, m := range g.def.metadata {
			if m.key == "_filename" {
				// The reference overwrites this internal key with the file path and never
				// outputs it.
				continue
			}
			out.Metadata[m.key] = jsonSafe(m.value)
		}
		if flagged[g] {
			out.Metadata["no_members_ok"] = true
		}
		pending = append(pending, memberFill{out, fin})
		res.Groups = append(res.Groups, out)
		res.byKey[out.Key] = out
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	fillMembers(pending, r.ld.dir, r.ld.opt.Parallelism)
	slices.SortFunc(res.Groups, func(a, b *Group) int { return strings.Compare(a.Key, b.Key) })
	return res, nil
}

// memberFill is an output group whose member list is still to be written.
type memberFill struct {
	out *Group
	fin *roaring.Bitmap
}

// fillMembers writes the member lists, in parallel: the sets are final and the directory is
// only read, and turning 3 million ids into names is most of what is left to do after the
// evaluation, which is sequential.
func fillMembers(pending []memberFill, dir *people.Directory, parallelism int) {
	workers := min(runtime.GOMAXPROCS(0), parallelism, max(1, len(pending)/512))
	if workers <= 1 {
		var a memberArena
		for _, p := range pending {
			p.out.Members = a.uids(dir, p.fin)
		}
		return
	}
	var wg sync.WaitGroup
	per := (len(pending) + workers - 1) / workers
	for lo := 0; lo < len(pending); lo += per {
		part := pending[lo:min(lo+per, len(pending))]
		wg.Go(func() {
			var a memberArena
			for _, p := range part {
				p.out.Members = a.uids(dir, p.fin)
			}
		})
	}
	wg.Wait()
}

// memberArena hands out the member lists of a result from shared backing arrays: one
// allocation per 64k members instead of one per group, and ids decoded in batches.
type memberArena struct {
	free []string
	ids  []uint32
}

func (m *memberArena) uids(dir *people.Directory, b *roaring.Bitmap) []string {
	n := int(b.GetCardinality())
	if n == 0 {
		return []string{}
	}
	if n > len(m.free) {
		m.free = make([]string, max(n, 1<<16))
	}
	// Full slice expression: appending to one group's list must not overwrite the next's.
	out := m.free[:0:n]
	m.free = m.free[n:]
	if m.ids == nil {
		m.ids = make([]uint32, 512)
	}
	// IDs follow the byte order of uids (people.NewDirectory), so this is already sorted.
	it := b.ManyIterator()
	for k := it.NextMany(m.ids); k > 0; k = it.NextMany(m.ids) {
		for _, id := range m.ids[:k] {
			out = append(out, dir.UID(id))
		}
	}
	return out
}

// Group returns the group with that key ("ou/cn"), or nil.
func (res *Result) Group(key string) *Group { return res.byKey[key] }

// WriteJSON writes the canonical JSON form: {"groups": {key: {description, dn, members,
// metadata}}}, keys sorted at every level, two-space indentation. It streams, so a result with
// tens of thousands of groups is not built twice in memory.
func (res *Result) WriteJSON(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.WriteString("{\n  \"groups\": {")
	if err := res.writeGroupsJSON(bw); err != nil {
		return err
	}
	if len(res.Groups) > 0 {
		bw.WriteString("\n  ")
	}
	bw.WriteString("}\n}\n")
	return bw.Flush()
}

// jsonChunk is the number of groups rendered as one piece by one goroutine.
const jsonChunk = 512

// writeGroupsJSON writes the groups' entries. Large results are rendered by several
// goroutines, chunk by chunk, and written in order: rendering 130 MB of JSON is the last
// sequential phase of a run. At most two chunks per core wait to be written.
func (res *Result) writeGroupsJSON(bw *bufio.Writer) error {
	workers := runtime.GOMAXPROCS(0)
	if len(res.Groups) <= jsonChunk || workers == 1 {
		var keys []string
		return writeGroupEntries(bw, res.Groups, true, &keys)
	}
	type piece struct {
		buf  *bytes.Buffer
		err  error
		done chan struct{}
	}
	pieces := make([]*piece, (len(res.Groups)+jsonChunk-1)/jsonChunk)
	for i := range pieces {
		pieces[i] = &piece{done: make(chan struct{})}
	}
	// The buffers go round: a piece is rendered into a free one, which returns once written.
	free := make(chan *bytes.Buffer, 2*workers)
	for range cap(free) {
		free <- new(bytes.Buffer)
	}
	var stop atomic.Bool
	go func() {
		for i, p := range pieces {
			buf := <-free
			go func() {
				defer close(p.done)
				buf.Reset()
				p.buf = buf
				if stop.Load() {
					return
				}
				part := res.Groups[i*jsonChunk : min((i+1)*jsonChunk, len(res.Groups))]
				pw := bufio.NewWriterSize(buf, 1<<14)
				var keys []string
				p.err = writeGroupEntries(pw, part, i == 0, &keys)
				pw.Flush()
			}()
		}
	}()
	var err error
	for _, p := range pieces {
		<-p.done
		if err == nil {
			if err = p.err; err == nil {
				_, err = bw.Write(p.buf.Bytes())
			}
			if err != nil {
				stop.Store(true) // the rest is only waited for, not rendered
			}
		}
		free <- p.buf
		p.buf = nil
	}
	return err
}

// writeGroupEntries writes groups as entries of the "groups" object; first says whether the
// first of them opens the object (no comma before it).
func writeGroupEntries(bw *bufio.Writer, groups []*Group, first bool, keys *[]string) error {
	for i, g := range groups {
		if i > 0 || !first {
			bw.WriteByte(',')
		}
		bw.WriteString("\n    ")
		writeJSONString(bw, g.Key)
		bw.WriteString(": {\n      \"description\": ")
		writeJSONString(bw, g.Description)
		bw.WriteString(",\n      \"dn\": ")
		if g.DN == "" {
			bw.WriteString("null")
		} else {
			writeJSONString(bw, g.DN)
		}
		bw.WriteString(",\n      \"members\": [")
		for j, m := range g.Members {
			if j > 0 {
				bw.WriteByte(',')
			}
			bw.WriteString("\n        ")
			writeJSONString(bw, m)
		}
		if len(g.Members) > 0 {
			bw.WriteString("\n      ")
		}
		bw.WriteString("],\n      \"metadata\": ")
		if len(g.Metadata) == 0 {
			bw.WriteString("{}")
		} else if !writeMetadata(bw, g.Metadata, keys) {
			b, err := json.MarshalIndent(g.Metadata, "      ", "  ")
			if err != nil {
				return err
			}
			bw.Write(b)
		}
		bw.WriteString("\n    }")
	}
	return nil
}

// writeMetadata writes the common metadata, strings and booleans only, exactly as
// json.MarshalIndent(m, "      ", "  ") would, without reflection or a temporary buffer. It
// reports false, having written nothing, for anything else. keys is scratch storage.
func writeMetadata(w *bufio.Writer, m map[string]any, scratch *[]string) bool {
	keys := (*scratch)[:0]
	for k, v := range m {
		switch v.(type) {
		case string, bool:
		default:
			return false
		}
		keys = append(keys, k)
	}
	*scratch = keys
	slices.Sort(keys)
	w.WriteString("{")
	for i, k := range keys {
		if i > 0 {
			w.WriteByte(',')
		}
		w.WriteString("\n        ")
		writeMarshalString(w, k)
		w.WriteString(": ")
		switch v := m[k].(type) {
		case string:
			writeMarshalString(w, v)
		case bool:
			if v {
				w.WriteString("true")
			} else {
				w.WriteString("false")
			}
		}
	}
	w.WriteString("\n      }")
	return true
}

// writeMarshalString writes s as json.Marshal does (HTML characters escaped too).
func writeMarshalString(w *bufio.Writer, s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= 0x7f {
			b, _ := json.Marshal(s)
			w.Write(b)
			return
		}
	}
	w.WriteByte('"')
	w.WriteString(s)
	w.WriteByte('"')
}

func writeJSONString(w *bufio.Writer, s string) {
	simple := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			simple = false
			break
		}
	}
	if simple {
		w.WriteByte('"')
		w.WriteString(s)
		w.WriteByte('"')
		return
	}
	b, _ := json.Marshal(s)
	w.Write(b)
}

// People returns the interned people the result was calculated from.
func (res *Result) People() *people.Directory { return res.repo.ld.dir }

// jsonSafe replaces values JSON cannot carry (YAML .nan and .inf floats) with their YAML
// spelling, so that one odd metadata value cannot make the whole output fail.
func jsonSafe(v any) any {
	switch x := v.(type) {
	case float64:
		switch {
		case math.IsNaN(x):
			return ".nan"
		case math.IsInf(x, 1):
			return ".inf"
		case math.IsInf(x, -1):
			return "-.inf"
		}
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonSafe(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonSafe(e)
		}
		return out
	}
	return v
}

// noMembersForbidden reports whether the file says an empty group is an error
// (no_members_ok false, as a boolean or the string "false").
func noMembersForbidden(d *definition) bool {
	v, ok := d.meta("no_members_ok")
	if !ok {
		return false
	}
	switch x := v.(type) {
	case bool:
		return !x
	case string:
		return x == "false"
	}
	return false
}

// groupDN is the DN of group cn under an OU's base (spec semantics §3.2 step 8), the cn
// escaped per RFC 4514. The name rules of an enumerated OU ([A-Za-z0-9_-]) leave nothing to
// escape, so this is the reference's `cn=<cn>,<base>`; should a name ever hold ',' or '+'
// it still names one entry (the reference would build `cn=a,b,...`, which servers refuse).
func groupDN(cn, base string) string { return "cn=" + dn.EscapeValue(cn) + "," + base }
