// Package journal is the write-ahead record of an apply, for resuming one that stopped (an
// interrupt, a budget running out, a crash, kill -9): an append-only file of JSON lines, one
// per write operation the apply starts and one per operation it finishes, tied to the plan
// file it applies.
//
// The first line is a Header naming the plan (SavedPlan.ID): a journal is never read against
// another plan (*PlanError). Every later line is a Record. Append writes its records in one
// write and syncs the file before it returns, and the apply appends the "start" records of a
// target's changes before it sends any of them: every write that may have reached a system
// has its start record on disk. A crash can leave at most a torn last line (a batch whose
// sync never returned, so none of its writes was sent); Open drops it.
//
// A Writer holds an exclusive lock on its file until Close (flock on Unix; released by the
// system when the process dies, so a killed apply never leaves a stale lock): a second apply
// or resume of the same journal meanwhile gets ErrBusy. Read takes no lock.
//
// Files are created 0600 without following a symbolic link (O_EXCL), and opened again only
// when they are a regular file that is not a symbolic link, is owned by the user running
// the apply and is not writable by others: a journal decides what a resumed apply takes for
// its own work, so one planted by somebody else must not be read.
package journal

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Version is the format version Create writes and Open reads.
const Version = 1

// MaxSize caps the size of a journal Open reads (a 50,000-person first apply writes a few
// tens of megabytes).
const MaxSize int64 = 512 << 20

// Events of a Record.
const (
	Start  = "start"  // the operation is about to be sent
	Done   = "done"   // it is in place (applied, already in place, covered)
	Failed = "failed" // it failed, may have failed (its answer was not seen) or was not sent
	Run    = "run"    // an apply (the first, or a resume) begins; Run numbers it
)

// Header is the first line of a journal.
type Header struct {
	Journal int       `json:"entitlements_journal"`
	Plan    string    `json:"plan"`
	Created time.Time `json:"created"`
}

// Record is one line after the header: one operation of one change, and what happened to it.
type Record struct {
	Run    int    `json:"run"`
	Event  string `json:"event"`
	Target string `json:"target,omitempty"`
	Group  string `json:"group,omitempty"`
	// Op is the change's kind (create, update, delete, create-container, update-person) for
	// the record of the change itself, or what one member of it gets (add-member,
	// remove-member).
	Op     string    `json:"op,omitempty"`
	Member string    `json:"member,omitempty"`
	Time   time.Time `json:"time"`
	Err    string    `json:"error,omitempty"`
	// Before is the group as it was before the change, on the start record of a change
	// that deletes a group or changes its attributes: what a resume needs to tell the
	// change's own effect from somebody else's.
	Before *Group `json:"before,omitempty"`
}

// Group is a group's state before a change.
type Group struct {
	Description string              `json:"description,omitempty"`
	Members     []string            `json:"members,omitempty"`
	Attrs       map[string][]string `json:"attrs,omitempty"`
}

// PlanError refuses a journal that belongs to another plan.
type PlanError struct {
	Path, Journal, Plan string
}

func (e *PlanError) Error() string {
	return fmt.Sprintf("journal %s belongs to plan %s, not to this plan (%s): it cannot be used to resume it", e.Path, short(e.Journal), short(e.Plan))
}

// ErrExists is returned by Create when the file exists: an earlier apply of the plan left it,
// and must be resumed, or the file removed.
var ErrExists = errors.New("journal exists")

// ErrBusy is returned by Create and Open when another apply holds the journal: two applies
// of one plan at once would each take the other's writes for their own.
var ErrBusy = errors.New("journal is in use by another apply")

// ErrUnsafe is returned for a journal that is not a regular file owned by the user, or that
// others may write.
var ErrUnsafe = errors.New("journal file is not safe to read")

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// Writer appends to a journal. It is safe for one goroutine at a time (the apply's).
type Writer struct {
	f    *os.File
	path string
	run  int
	now  func() time.Time
}

// Log is a journal's content.
type Log struct {
	Header  Header
	Records []Record
	// Runs is the number of applies recorded (run records).
	Runs int
	// Torn is set when the file ended with a partial line (dropped).
	Torn bool
}

// Create creates the journal of the plan planID at path and records the start of run 1.
func Create(path, planID string) (*Writer, error) {
	f, err := createExcl(path)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("%s: %w (an earlier apply of this plan stopped: resume it, or remove the file)", path, ErrExists)
		}
		return nil, fmt.Errorf("journal: %w", err)
	}
	if err := lockFile(f, path); err != nil {
		f.Close()
		return nil, err
	}
	w := &Writer{f: f, path: path, run: 1, now: time.Now}
	line, err := json.Marshal(Header{Journal: Version, Plan: planID, Created: w.now().UTC()})
	if err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	if err := w.Append(Record{Event: Run}); err != nil {
		f.Close()
		return nil, err
	}
	// The file's directory entry must survive a crash as well as its content.
	syncDir(filepath.Dir(path))
	return w, nil
}

// Open opens the journal at path for resuming the plan planID: it checks the file and its
// header, reads every record, drops a torn last line, and records the start of the next run.
func Open(path, planID string) (*Writer, *Log, error) {
	f, err := openChecked(path, true)
	if err != nil {
		return nil, nil, err
	}
	if err := lockFile(f, path); err != nil {
		f.Close()
		return nil, nil, err
	}
	log, keep, err := read(f, path)
	if err == nil && log.Header.Plan != planID {
		err = &PlanError{Path: path, Journal: log.Header.Plan, Plan: planID}
	}
	if err == nil && log.Torn {
		err = f.Truncate(keep)
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekEnd)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	w := &Writer{f: f, path: path, run: log.Runs + 1, now: time.Now}
	if err := w.Append(Record{Event: Run}); err != nil {
		f.Close()
		return nil, nil, err
	}
	return w, log, nil
}

// Read reads the journal at path without writing to it.
func Read(path string) (*Log, error) {
	f, err := openChecked(path, false)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	log, _, err := read(f, path)
	return log, err
}

// read parses a journal; keep is the length of its complete lines.
func read(f *os.File, path string) (*Log, int64, error) {
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, 0, fmt.Errorf("journal %s: %w", path, err)
	}
	if int64(len(data)) > MaxSize {
		return nil, 0, fmt.Errorf("journal %s: larger than %d bytes", path, MaxSize)
	}
	log := &Log{}
	keep := int64(len(data))
	if i := bytes.LastIndexByte(data, '\n'); i < len(data)-1 {
		// A batch whose sync never returned: none of its operations was sent.
		log.Torn, keep = true, int64(i+1)
		data = data[:i+1]
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, int(MaxSize))
	n := 0
	for sc.Scan() {
		n++
		if n == 1 {
			if err := strictJSON(sc.Bytes(), &log.Header); err != nil || log.Header.Journal != Version {
				return nil, 0, fmt.Errorf("journal %s: not a journal of this version (line 1): %v", path, err)
			}
			continue
		}
		var r Record
		if err := strictJSON(sc.Bytes(), &r); err != nil {
			return nil, 0, fmt.Errorf("journal %s: line %d: %w", path, n, err)
		}
		if r.Event == Run {
			log.Runs = r.Run
		}
		log.Records = append(log.Records, r)
	}
	if n == 0 {
		return nil, 0, fmt.Errorf("journal %s: empty", path)
	}
	return log, keep, sc.Err()
}

func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// Run is the number of the apply the writer records (1 for the first).
func (w *Writer) Run() int { return w.run }

// Path is the journal's file name.
func (w *Writer) Path() string { return w.path }

// Append writes records (stamped with the run and the time) in one write and syncs the file:
// when it returns nil they are on disk. An error means they may not be: the caller must not
// send the writes they announce.
func (w *Writer) Append(recs ...Record) error {
	var buf bytes.Buffer
	now := w.now().UTC()
	for _, r := range recs {
		r.Run, r.Time = w.run, now
		line, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("journal %s: %w", w.path, err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	if _, err := w.f.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("journal %s: %w", w.path, err)
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("journal %s: sync: %w", w.path, err)
	}
	return nil
}

// Close closes the file, which releases its lock.
func (w *Writer) Close() error { return w.f.Close() }

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // best effort: not every file system syncs directories
		d.Close()
	}
}
