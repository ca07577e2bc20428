package audit

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/entitlements-go/entitlements/cache"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/internal/dn"
	"github.com/entitlements-go/entitlements/internal/gitsafe"
	"github.com/entitlements-go/entitlements/internal/redact"
	"github.com/entitlements-go/entitlements/internal/safefile"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/validate"
)

// GitRepo is the git repository audit log (auditor_class: GitRepo). Settings:
//
//	checkout_directory  (required) where the repo is cloned; reused (reset, cleaned, pulled)
//	commit_message      (required) message of both commits (the sync one is prefixed
//	                    "[sync commit] "); used as written (no variable expansion, as the
//	                    reference; render values with ERB)
//	git_name, git_email (required) the committer
//	repo                owner/name on GitHub, cloned over SSH (git@github.com:owner/name.git)
//	repo_url            any git URL or a local path, instead of repo
//	sshkey              base64 private key for SSH (optional: without it ssh's own keys and
//	                    agent are used)
//	known_hosts         the known_hosts file SSH host keys are checked against. Default
//	                    ~/.ssh/known_hosts. Host keys are always verified unless
//	skip_host_key_check true: do not verify the server's host key (logged as a warning on
//	                    every run; the reference does this silently)
//	person_dn_format    members are written as person DNs (%KEY% replaced by the uid)
//	branch              the branch committed and pushed to. Default master (the reference's)
//
// Git is the git binary, not go-git: the reference drives git too, and so the checkout,
// its hooks-free commits and above all SSH (OpenSSH with its host-key checking, agents,
// ~/.ssh configuration for proxies) behave exactly as an operator's own git does, without a
// second SSH and git implementation to trust and keep patched. It needs git (and ssh for SSH
// remotes) on PATH; Setup says so clearly when they are missing.
//
// The checkout and what is pushed to the repo are written by others. git runs hardened (no
// hook, fsmonitor, credential helper, pager or other program named by a config; no system or
// user git config; no GIT_* variable of the caller), and a reused
// checkout whose .git/config sets what cannot be switched off that way (filter or diff
// drivers, includes, url rewrites, upload-pack, core.worktree) is refused. Every file of the
// tree is read and written inside the checkout (os.Root), never through a link: a tracked
// symbolic link, FIFO or device in the tree (outside dot entries and README.md, which are
// never touched) fails the commit, naming it, before anything is written. URLs in messages
// have their user-info (a token) masked.
type GitRepo struct {
	opt Options

	dir, message, name, email string
	url, branch               string
	personFormat              string
	key                       []byte
	knownHosts                string
	skipHostKey               bool

	tmp    string // holds the key while the auditor is set up
	gitDir string // the checkout's .git, once it is known to be a directory of ours
	ready  bool
}

var repoName = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)

func newGitRepo(e config.Value, opt Options) (*GitRepo, error) {
	get := func(k string) string { return strings.TrimSpace(e.Get(k).Text()) }
	g := &GitRepo{opt: opt, dir: get("checkout_directory"), message: get("commit_message"),
		name: get("git_name"), email: get("git_email"), personFormat: get("person_dn_format"),
		knownHosts: get("known_hosts"), branch: get("branch")}
	var missing []string
	for k, v := range map[string]string{"checkout_directory": g.dir, "commit_message": g.message,
		"git_name": g.name, "git_email": g.email} {
		if v == "" {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return nil, fmt.Errorf("missing setting(s): %s", strings.Join(missing, ", "))
	}
	repo, rawURL := get("repo"), get("repo_url")
	switch {
	case rawURL != "":
		g.url = rawURL
	case repo == "":
		return nil, errors.New("set repo (owner/name on GitHub) or repo_url (any git URL or local path)")
	case !repoName.MatchString(repo):
		return nil, fmt.Errorf("repo %q must be of the form owner/name", repo)
	default:
		g.url = "git@github.com:" + repo + ".git"
	}
	if g.branch == "" {
		g.branch = "master"
	}
	if k := get("sshkey"); k != "" {
		key, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(k), ""))
		if err != nil {
			return nil, fmt.Errorf("sshkey is not base64: %w", err)
		}
		g.key = key
	}
	if v := e.Get("skip_host_key_check"); !v.IsNull() {
		b, ok := v.AsBool()
		if !ok {
			return nil, fmt.Errorf("skip_host_key_check must be true or false, not %s", v.Text())
		}
		g.skipHostKey = b
	}
	if abs, err := filepath.Abs(g.dir); err == nil {
		g.dir = abs
	}
	return g, nil
}

// Description implements Auditor. The URL's user-info (a token in an https URL) is masked.
func (g *GitRepo) Description() string { return "GitRepo " + redact.URLs(g.url) }

// usesSSH reports whether the remote is reached over SSH (scp-like or ssh:// URLs).
func (g *GitRepo) usesSSH() bool {
	u := g.url
	if strings.HasPrefix(u, "ssh://") || strings.HasPrefix(u, "git+ssh://") || strings.HasPrefix(u, "ssh+git://") {
		return true
	}
	if strings.Contains(u, "://") || filepath.IsAbs(u) || strings.HasPrefix(u, ".") {
		return false
	}
	// scp-like syntax: [user@]host:path, where the part before ':' has no '/'.
	host, _, ok := strings.Cut(u, ":")
	return ok && !strings.Contains(host, "/")
}

// sshCommand is the GIT_SSH_COMMAND of the remote: only our key when one is configured, no
// prompts, and strict host-key checking against known_hosts unless explicitly disabled.
func (g *GitRepo) sshCommand() (string, error) {
	args := []string{"ssh", "-o", "BatchMode=yes"}
	if g.skipHostKey {
		args = append(args, "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null")
	} else {
		kh := g.knownHosts
		if kh == "" {
			home, _ := g.opt.Getenv("HOME")
			if home == "" {
				return "", errors.New("no known_hosts setting and HOME is not set: set known_hosts to the file holding the server's host key")
			}
			kh = filepath.Join(home, ".ssh", "known_hosts")
		}
		if _, err := os.Stat(kh); err != nil {
			return "", fmt.Errorf("SSH host keys are verified against %s, which cannot be read (%w): add the server's host key there (check its fingerprint), or set known_hosts", kh, err)
		}
		args = append(args, "-o", "StrictHostKeyChecking=yes", "-o", "UserKnownHostsFile="+kh)
	}
	if g.key != nil {
		args = append(args, "-o", "IdentitiesOnly=yes", "-i", filepath.Join(g.tmp, "key"))
	}
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = shellQuote(a)
	}
	return strings.Join(quoted, " "), nil
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789=-_./,:@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// git runs one git command in dir. remote says that it talks to the remote (SSH settings).
func (g *GitRepo) git(ctx context.Context, dir string, remote bool, args ...string) (string, error) {
	cmd := gitsafe.Command(ctx, g.opt.Git, dir, args...)
	if g.gitDir != "" {
		// The checkout's own .git, whatever a .git file or core.worktree would say.
		cmd.Env = append(cmd.Env, "GIT_DIR="+g.gitDir, "GIT_WORK_TREE="+g.dir)
	}
	if remote && g.usesSSH() {
		sc, err := g.sshCommand()
		if err != nil {
			return "", err
		}
		cmd.Env = append(cmd.Env, "GIT_SSH_COMMAND="+sc)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	g.opt.Logger.Debug("git", "args", redact.URLs(strings.Join(args, " ")), "took", time.Since(start))
	if err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = strings.TrimSpace(out.String())
		}
		if errors.Is(err, exec.ErrNotFound) {
			return "", fmt.Errorf("the audit log needs the git binary: %w", err)
		}
		return "", fmt.Errorf("git %s: %w: %s", args[0], err, redact.URLs(msg))
	}
	return out.String(), nil
}

// Setup implements Auditor: clone the repo, or bring an existing checkout back to the
// remote's branch (hard reset, clean, fetch), then set the committer.
func (g *GitRepo) Setup(ctx context.Context) error {
	if g.skipHostKey && g.usesSSH() {
		g.opt.Logger.Warn("SSH host keys of the audit log remote are NOT verified (skip_host_key_check: true): anyone on the network path can impersonate it", "remote", redact.URLs(g.url))
	}
	if g.key != nil && g.tmp == "" {
		tmp, err := os.MkdirTemp("", "entitlements-audit-")
		if err != nil {
			return err
		}
		g.tmp = tmp
		if err := os.WriteFile(filepath.Join(tmp, "key"), g.key, 0o600); err != nil {
			return err
		}
	}
	gitDir := filepath.Join(g.dir, ".git")
	if fi, err := os.Lstat(gitDir); err == nil {
		// A reused checkout: its .git must be a directory of its own (a link or a .git file
		// would point git at another repository) whose config runs nothing.
		if !fi.IsDir() {
			return fmt.Errorf("checkout_directory %s: .git is not a directory (%s): remove the checkout", g.dir, fi.Mode().Type())
		}
		if err := gitsafe.CheckConfig(ctx, g.opt.Git, gitDir); err != nil {
			return fmt.Errorf("checkout_directory %s: %w", g.dir, err)
		}
		g.gitDir = gitDir
		if err := g.refresh(ctx); err != nil {
			return err
		}
	} else {
		if ents, err := os.ReadDir(g.dir); err == nil && len(ents) > 0 {
			return fmt.Errorf("checkout_directory %s exists, is not empty and is not a git checkout", g.dir)
		}
		if err := os.MkdirAll(g.dir, 0o755); err != nil {
			return err
		}
		if _, err := g.git(ctx, g.dir, true, "clone", "--quiet", "--no-checkout", "--", g.url, "."); err != nil {
			return err
		}
		g.gitDir = gitDir
		if err := g.checkoutBranch(ctx); err != nil {
			return err
		}
	}
	if _, err := g.git(ctx, g.dir, false, "config", "user.name", g.name); err != nil {
		return err
	}
	if _, err := g.git(ctx, g.dir, false, "config", "user.email", g.email); err != nil {
		return err
	}
	g.ready = true
	return nil
}

// refresh makes an existing checkout equal to the remote branch: whatever a previous,
// interrupted run left (staged files, commits it could not push) is dropped, so this run
// starts from what the remote records.
func (g *GitRepo) refresh(ctx context.Context) error {
	if _, err := g.git(ctx, g.dir, false, "remote", "set-url", "origin", g.url); err != nil {
		return err
	}
	if _, err := g.git(ctx, g.dir, true, "fetch", "--quiet", "origin"); err != nil {
		return err
	}
	if err := g.checkoutBranch(ctx); err != nil {
		return err
	}
	_, err := g.git(ctx, g.dir, false, "clean", "-f", "-d", "-x", "--quiet")
	return err
}

// checkoutBranch checks out the branch at the remote's commit, or, when the remote has no
// such branch yet (a new, empty audit repo), an unborn branch of that name.
func (g *GitRepo) checkoutBranch(ctx context.Context) error {
	remoteRef := "refs/remotes/origin/" + g.branch
	if _, err := g.git(ctx, g.dir, false, "rev-parse", "--verify", "--quiet", remoteRef); err == nil {
		_, err := g.git(ctx, g.dir, false, "checkout", "--quiet", "--force", "-B", g.branch, remoteRef)
		return err
	}
	if _, err := g.git(ctx, g.dir, false, "rev-parse", "--verify", "--quiet", "HEAD"); err == nil {
		return fmt.Errorf("the remote has no branch %s but the checkout has commits; refusing to guess", g.branch)
	}
	_, err := g.git(ctx, g.dir, false, "symbolic-ref", "HEAD", "refs/heads/"+g.branch)
	return err
}

// Reachable checks, reading only, that the remote answers with the configured key and a
// known host key (`entitlements doctor`): one `git ls-remote` of the branch. A branch that
// does not exist yet is fine (the first commit creates it).
func (g *GitRepo) Reachable(ctx context.Context) error {
	if g.key != nil && g.tmp == "" {
		tmp, err := os.MkdirTemp("", "entitlements-audit-")
		if err != nil {
			return err
		}
		g.tmp = tmp
		defer g.Close()
		if err := os.WriteFile(filepath.Join(tmp, "key"), g.key, 0o600); err != nil {
			return err
		}
	}
	_, err := g.git(ctx, os.TempDir(), true, "ls-remote", "--heads", "--", g.url, g.branch)
	return err
}

// Close implements Auditor: the key is removed from disk.
func (g *GitRepo) Close() error {
	if g.tmp == "" {
		return nil
	}
	err := os.RemoveAll(g.tmp)
	g.tmp = ""
	return err
}

// Content is the file content of a group: members (as person DNs with personFormat),
// lower-cased and sorted, one per line, or "# No members"; then the sorted metadata lines.
func Content(members []string, metadata map[string]any, personFormat string) string {
	if personFormat != "" {
		dns := make([]string, len(members))
		for i, m := range members {
			dns[i] = strings.ReplaceAll(personFormat, "%KEY%", m)
		}
		members = dns
	}
	return string(cache.StateFile(members, metadata))
}

// change is a file write (content) or removal (del).
type change struct {
	content string
	del     bool
}

// Commit implements Auditor: the sync commit (files made to match what the providers read
// before apply, and files of no calculated group removed; skipped after a provider failure),
// then the valid commit (the changes that succeeded; failed ones leave their files alone).
// Each commit is pushed. A tracked link or special file in the tree fails it before any
// file is written.
func (g *GitRepo) Commit(ctx context.Context, run *Run) (Record, error) {
	var rec Record
	if !g.ready {
		return rec, errors.New("commit without a successful setup")
	}
	root, err := os.OpenRoot(g.dir)
	if err != nil {
		return rec, err
	}
	defer root.Close()
	syncC, validC, err := g.plan(root, run)
	if err != nil {
		return rec, err
	}
	log := g.opt.Logger
	if len(syncC) > 0 {
		if run.ProviderErr != nil {
			log.Warn("audit log: sync changes not committed because a provider failed", "count", len(syncC))
		} else {
			log.Warn("audit log: sync changes required (the files did not match what the providers read)", "count", len(syncC))
			id, err := g.commitChanges(ctx, root, syncC, "[sync commit] "+g.message)
			if err != nil {
				return rec, err
			}
			if id != "" {
				rec.Commits = append(rec.Commits, id)
			}
		}
	}
	id, err := g.commitChanges(ctx, root, validC, g.message)
	if id != "" {
		rec.Commits = append(rec.Commits, id)
	}
	return rec, err
}

// plan decides the two commits' file changes. It lists the tree first: a link or special
// file in it is an error before anything is read.
func (g *GitRepo) plan(root *os.Root, run *Run) (syncC, validC map[string]change, err error) {
	files, err := cache.StateFiles(root)
	if err != nil {
		return nil, nil, fmt.Errorf("the audit log checkout: %w", err)
	}
	syncC, validC = map[string]change{}, map[string]change{}
	var readErr error
	read := func(rel string) (string, bool) {
		b, err := safefile.ReadIn(root, rel, safefile.Options{})
		if errors.Is(err, fs.ErrNotExist) {
			return "", false
		}
		if err != nil && readErr == nil {
			readErr = err
		}
		return string(b), err == nil
	}
	calculated := map[string]bool{}
	for _, grp := range run.Groups {
		k := dn.Normalize(grp.DN)
		calculated[k] = true
		rel := cache.PathFromDN(grp.DN)
		want := Content(grp.Members, grp.Metadata, g.personFormat)
		a := run.Actions[k]
		have, exists := read(rel)
		if a == nil {
			switch {
			case run.Unapplied[k]:
				g.opt.Logger.Warn("audit log: change not recorded (it was not applied)", "file", rel, "change", "attributes")
			case exists && have != want:
				syncC[rel] = change{content: want}
			case !exists && (len(grp.Members) > 0 || run.Confirmed[k]):
				// An empty group gets a file only once a provider confirmed it exists: an
				// empty file would be a predictive hit hiding a group still to be created.
				syncC[rel] = change{content: want}
			}
			continue
		}
		g.action(rel, a, grp.Metadata, want, have, exists, syncC, validC)
	}
	// Deleted groups are no longer calculated.
	for k, a := range run.Actions {
		if a.Kind != providers.DeleteGroup || calculated[k] {
			continue
		}
		rel := cache.PathFromDN(a.DN)
		have, exists := read(rel)
		g.action(rel, a, metadataOf(have), "", have, exists, syncC, validC)
	}
	if readErr != nil {
		return nil, nil, fmt.Errorf("the audit log checkout: %w", readErr)
	}
	// Files of no calculated group and no action go away in the sync commit.
	for _, rel := range files {
		k := dn.Normalize(cache.DNFromPath(rel))
		if !calculated[k] && run.Actions[k] == nil {
			syncC[rel] = change{del: true}
		}
	}
	return syncC, validC, nil
}

// action decides the files of a group with an action. want is the new content ("" for a
// delete); existing content is what the provider read, with the metadata the file records
// (providers do not read metadata back, so it is not a difference).
func (g *GitRepo) action(rel string, a *Action, md map[string]any, want, have string, exists bool, syncC, validC map[string]change) {
	log := g.opt.Logger
	switch a.Kind {
	case providers.CreateGroup:
		if exists && a.Succeeded {
			// A file for a group that did not exist: the sync commit removes it, the valid
			// commit adds it back with the new content.
			syncC[rel] = change{del: true}
		}
		if a.Succeeded {
			validC[rel] = change{content: want}
		} else {
			log.Warn("audit log: change not recorded (it was not applied)", "file", rel, "change", "create")
		}
	case providers.UpdateGroup, providers.DeleteGroup:
		if fm := metadataOf(have); len(fm) > 0 {
			md = fm
		}
		existing := Content(a.Existing, md, g.personFormat)
		if !a.Succeeded {
			log.Warn("audit log: change not recorded (it was not applied)", "file", rel, "change", a.Kind.String())
			return
		}
		if !exists || have != existing {
			syncC[rel] = change{content: existing}
		}
		if a.Kind == providers.DeleteGroup {
			validC[rel] = change{del: true}
		} else {
			validC[rel] = change{content: want}
		}
	}
}

// metadataOf parses the metadata lines of a file's content. The "existing" content of an
// update or delete takes the metadata the file records (else the calculated one): providers
// do not read metadata back, and a metadata difference alone is not an action.
func metadataOf(content string) map[string]any {
	out := map[string]any{}
	for line := range strings.Lines(content) {
		line = strings.TrimRight(line, "\n")
		if rest, ok := strings.CutPrefix(line, "metadata_"); ok {
			k, v, _ := strings.Cut(rest, "=")
			out[k] = v
		}
	}
	return out
}

// commitChanges writes the files inside root, stages them, commits and pushes when anything
// changed, and returns the id of the commit ("" when there was nothing to commit).
func (g *GitRepo) commitChanges(ctx context.Context, root *os.Root, changes map[string]change, message string) (string, error) {
	if len(changes) == 0 {
		return "", nil
	}
	paths := slices.Sorted(maps.Keys(changes))
	var staged []string
	for _, rel := range paths {
		c := changes[rel]
		st, err := root.Lstat(rel)
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if exists && !st.Mode().IsRegular() {
			// StateFiles refused links and special files; a directory may stand where a
			// group's file goes.
			return "", &safefile.Error{Path: filepath.Join(g.dir, filepath.FromSlash(rel)), Err: validate.ErrNotRegular}
		}
		if c.del {
			if !exists {
				continue // already gone (another run removed it)
			}
			if err := root.Remove(rel); err != nil {
				return "", err
			}
			removeEmptyParents(root, path.Dir(rel))
		} else {
			if err := root.MkdirAll(path.Dir(rel), 0o755); err != nil {
				return "", err
			}
			if err := writeIn(root, rel, c.content); err != nil {
				return "", err
			}
		}
		staged = append(staged, rel)
	}
	if len(staged) == 0 {
		return "", nil
	}
	// The checkout was clean after Setup and only this commit's files were written since
	// the last commit: staging the whole tree stages exactly them (one scan of the tree,
	// where a pathspec list costs a scan per path).
	if _, err := g.git(ctx, g.dir, false, "add", "--all", "--", "."); err != nil {
		return "", err
	}
	if _, err := g.git(ctx, g.dir, false, "diff", "--cached", "--quiet", "--no-ext-diff", "--no-textconv"); err == nil {
		return "", nil // nothing differs after all
	}
	if _, err := g.git(ctx, g.dir, false, "commit", "--quiet", "--no-verify", "-m", message); err != nil {
		return "", err
	}
	id, err := g.git(ctx, g.dir, false, "rev-parse", "--verify", "HEAD")
	if err != nil {
		return "", err
	}
	if _, err := g.git(ctx, g.dir, true, "push", "--quiet", "origin", "HEAD:refs/heads/"+g.branch); err != nil {
		return "", fmt.Errorf("pushing the audit log: %w", err)
	}
	return strings.TrimSpace(id), nil
}

// writeIn replaces the content of the regular file rel inside root (or creates it). The
// file is opened without blocking (a FIFO swapped in since the Lstat fails to open rather
// than hang) and checked to be a regular file before it is truncated.
func writeIn(root *os.Root, rel, content string) error {
	f, err := root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		return err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = &safefile.Error{Path: f.Name(), Err: validate.ErrNotRegular}
		}
		return err
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return err
	}
	if _, err := f.WriteString(content); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// removeEmptyParents removes the directories left empty by a removed file, up to root.
func removeEmptyParents(root *os.Root, dir string) {
	for dir != "." && dir != "/" {
		if err := root.Remove(dir); err != nil {
			return
		}
		dir = path.Dir(dir)
	}
}

func lookupEnv(k string) (string, bool) { return os.LookupEnv(k) }
