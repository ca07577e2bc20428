package journal_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/entitlements-go/entitlements/journal"
)

func TestCreateAppendOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plan.json.journal")
	w, err := journal.Create(path, "plan-a")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(journal.Record{Event: journal.Start, Target: "teams", Group: "cn=a", Op: "add-member", Member: "alice"},
		journal.Record{Event: journal.Done, Target: "teams", Group: "cn=a", Op: "add-member", Member: "alice"}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if _, err := journal.Create(path, "plan-a"); !errors.Is(err, journal.ErrExists) {
		t.Fatalf("second Create: %v, want ErrExists", err)
	}
	w2, log, err := journal.Open(path, "plan-a")
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	if w2.Run() != 2 || log.Runs != 1 || len(log.Records) != 3 || log.Records[2].Member != "alice" || log.Records[1].Run != 1 {
		t.Fatalf("run %d, log %+v", w2.Run(), log)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
}

func TestOpenRefusesAnotherPlan(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	w, err := journal.Create(path, "plan-a")
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	_, _, err = journal.Open(path, "plan-b")
	var pe *journal.PlanError
	if !errors.As(err, &pe) || pe.Journal != "plan-a" || pe.Plan != "plan-b" {
		t.Fatalf("error %v, want a *journal.PlanError", err)
	}
}

// A crash in the middle of a batch leaves a partial line: its writes were never sent, so Open
// drops it, and the next append starts on a line of its own.
func TestOpenDropsATornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	w, err := journal.Create(path, "p")
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"run":1,"event":"sta`)
	f.Close()
	w2, log, err := journal.Open(path, "p")
	if err != nil {
		t.Fatal(err)
	}
	if !log.Torn || len(log.Records) != 1 {
		t.Fatalf("log %+v: want the torn line dropped", log)
	}
	if err := w2.Append(journal.Record{Event: journal.Start, Target: "t"}); err != nil {
		t.Fatal(err)
	}
	w2.Close()
	log, err = journal.Read(path)
	if err != nil || len(log.Records) != 3 || log.Records[2].Target != "t" {
		t.Fatalf("after append: %+v %v", log, err)
	}
}

func TestUnsafeFilesAreRefused(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("unix permissions")
	}
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	w, err := journal.Create(real, "p")
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	shared := filepath.Join(dir, "shared")
	w, err = journal.Create(shared, "p")
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if err := os.Chmod(shared, 0o666); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{link, shared, dir} {
		if _, _, err := journal.Open(p, "p"); !errors.Is(err, journal.ErrUnsafe) {
			t.Errorf("Open(%s): %v, want ErrUnsafe", filepath.Base(p), err)
		}
	}
	// Create does not follow a link planted at the journal's name either.
	if _, err := journal.Create(link, "p"); !errors.Is(err, journal.ErrExists) {
		t.Errorf("Create over a symlink: %v, want ErrExists", err)
	}
}

// Two applies of one plan at once would each take the other's writes for their own: while a
// writer holds the journal, a second Open is refused, and once it closes, a resume may open it.
func TestSecondWriterIsRefused(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("the journal is not locked on this system")
	}
	path := filepath.Join(t.TempDir(), "plan.json.journal")
	w, err := journal.Create(path, "plan-a")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := journal.Open(path, "plan-a"); !errors.Is(err, journal.ErrBusy) {
		t.Fatalf("Open while the creator holds it: %v, want ErrBusy", err)
	}
	if _, err := journal.Read(path); err != nil {
		t.Fatalf("Read takes no lock: %v", err)
	}
	w.Close()
	w2, _, err := journal.Open(path, "plan-a")
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	if _, _, err := journal.Open(path, "plan-a"); !errors.Is(err, journal.ErrBusy) {
		t.Fatalf("Open while a resume holds it: %v, want ErrBusy", err)
	}
	w2.Close()
}
