// Package fromgit builds datasets in the competition layout from git history: a
// commit's 1-3 added lines of real code become the middle of a datapoint (alone, or
// inside a larger block the commit added: see [Style]), the snapshot is the parent
// commit (see [Run]).
package fromgit

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/repoctx/repoctx/dataset"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/internal/atomicfile"
	"github.com/repoctx/repoctx/internal/pathsafe"
	"github.com/repoctx/repoctx/snapshot"
	sitter "github.com/smacker/go-tree-sitter"
)

// Defaults of [Options].
const (
	DefaultPerRepo        = 20        // datapoints per repository
	DefaultMaxCommits     = 2000      // non-merge commits listed per repository
	DefaultMaxCommitFiles = 30        // files a commit may touch
	DefaultMaxFileBytes   = 200 << 10 // 200 KiB: largest completion file
)

// Output layouts of [Run].
const (
	LayoutZip     = "zip"     // {lang}-{stage}.zip holding one zip per snapshot
	LayoutFolders = "folders" // repositories-{lang}-{stage}/{snapshot}/
)

// Styles of datapoint, the values of [Options].Style.
const (
	// StyleSmall takes a hunk that adds 1-3 lines of real code and nothing
	// else: the whole hunk is the middle, and the prefix and suffix are
	// text the snapshot's version of the file mostly has (the default).
	StyleSmall = "small"
	// StyleBlock takes a hunk that adds at least [BlockMinLines] non-blank
	// lines; the middle is 1-3 consecutive code lines inside it, the first
	// real code, with at least [BlockMinBefore] of the hunk's non-blank
	// lines before it, so
	// the prefix ends in new code the snapshot has never seen, like the
	// competition's example datapoint (whose snapshot file is a prefix of
	// its prefix) and ../shared/data/devb.
	StyleBlock = "block"
)

// Thresholds of [StyleBlock], in lines.
const (
	BlockMinLines  = 6 // fewest non-blank added lines of the hunk
	BlockMinBefore = 2 // fewest non-blank added lines of the hunk before the middle
	blockMaxMiddle = 3 // most lines of the middle
)

// maxMiddleLineBytes is the longest line, in bytes, that FromGit accepts in
// a middle: longer added lines are generated or minified data, not code
// someone types.
const maxMiddleLineBytes = 400

// minCodeChars is the fewest non-space characters a middle line must have.
const minCodeChars = 6

// Options configures [Run]. Zero numeric fields take the
// defaults given with each field.
type Options struct {
	// Repos are the paths of local git repositories: a work tree, its .git
	// folder, or a bare repository (such as a mirror).
	Repos []string
	// Name is the "owner/name" of the repository, used in ids, the repo
	// field and snapshot names. It may only be set with a single repository.
	// When empty, the name comes from the path: a folder named "owner+name"
	// (for a bare repository also its parent folder, as in a mirror's
	// owner+name/repo) gives "owner/name", anything else
	// "local/<folder name>" (a ".git" suffix removed).
	Name string
	// Lang is a registered grammar name (grammars.Names); the completion files
	// are those that grammars.ForPath gives this language.
	Lang string
	// Stage is the stage name in the output file names, e.g. "git".
	Stage string
	// OutDir is the folder written to; it is created if needed.
	OutDir string
	// PerRepo is the most datapoints taken from one repository (default 20).
	PerRepo int
	// MaxCommits is how many non-merge commits, newest first, are listed per
	// repository (default 2000). Commits are drawn from them in a seeded
	// random order until PerRepo datapoints are found.
	MaxCommits int
	// Seed drives the order in which commits are tried and the choice of
	// the hunk within a commit. The same seed, options and repository state
	// give byte-identical output.
	Seed int64
	// Layout is LayoutZip (the default) or LayoutFolders.
	Layout string
	// Style is StyleSmall (the default, also when empty) or StyleBlock: what
	// hunk a middle comes from and where in it the middle sits.
	Style string
	// MaxCommitFiles skips commits that touch more files (default 30):
	// mass renames, formatting sweeps and vendored drops are not edits.
	MaxCommitFiles int
	// MaxFileBytes skips completion files larger than this many bytes after
	// the commit (default 200 KiB).
	MaxFileBytes int64
	// Since, when set, is a revision whose history is left out (the range
	// Since..Until). Until is the revision to walk back from (default HEAD).
	Since, Until string
	// Log, when not nil, gets one line per skipped commit or file.
	Log io.Writer
}

// Summary says what [Run] did.
type Summary struct {
	Repos      []RepoSummary // one per repository, in the order given
	Datapoints int           // datapoints written
	Snapshots  int           // distinct snapshots the datapoints use
	Written    int           // snapshots written by this run
	Reused     int           // snapshot folders already present and kept
	Bytes      int64         // bytes written: datapoints, truth and snapshots
	Files      []string      // paths of the datapoint file, truth file and zip or folder
	Elapsed    time.Duration // wall time
}

// RepoSummary is what [Run] found in one repository.
//
// SkippedCommits counts commits tried and not used, by reason: "root
// commit", "too many files" (over MaxCommitFiles), "no file of the language"
// (no modified file of Lang that can be used), "no real-code hunk" (no hunk of
// the Style with a middle that passes the real-code filter), "snapshot
// too large" (over the snapshot.DefaultMaxFiles or snapshot.DefaultMaxSnapshotBytes that
// readers accept), "duplicate id". SkippedFiles counts files of the language
// not used, by reason: "added" (not in the snapshot), "deleted", "not a
// regular file", "unusable path" (one a snapshot reader refuses, such as one
// with a backslash), "too large", "binary", "not UTF-8", "diff mismatch" (the
// diff disagrees with the file: not expected).
type RepoSummary struct {
	Repo           string // "owner/name"
	Path           string // as given in Options.Repos
	Commits        int    // non-merge commits listed
	Scanned        int    // commits tried
	Datapoints     int    // datapoints taken, at most PerRepo
	Snapshots      int    // distinct parent revisions they use
	SkippedCommits map[string]int
	SkippedFiles   map[string]int
}

// FromGit builds a benchmark in the competition layout from the history of
// git repositories, so that retrieval can be evaluated on any code base.
// The competition's own datapoints were built the same way from real
// commits: each middle is 1-3 lines of code a commit added.
//
// For each repository it lists the last MaxCommits non-merge commits
// (Since..Until), tries them in a seeded random order, and from each commit
// takes at most one datapoint, until PerRepo are found. A commit is used
// when it has a parent, touches at most MaxCommitFiles files, and modifies a
// file of the language (regular file on both sides, valid UTF-8, no NUL
// byte, at most MaxFileBytes after the commit) with a hunk of the Style.
// A real-code line is no blank line, comment, import, package line,
// docstring or text inside a multi-line string or comment, no line with
// fewer than 6 non-space characters, made only of brackets and punctuation,
// or only of keywords (`else:`, `pass`, `} else {`), and none over 400
// bytes; the line after a middle does not start inside a multi-line string
// or comment either.
//
// With StyleSmall (the default) the hunk adds 1-3 lines, all real code, and
// they are the middle. With StyleBlock the hunk adds at least BlockMinLines
// (6) non-blank lines; a middle may start at any real-code line of the hunk
// that has at least BlockMinBefore (2) of the hunk's non-blank lines before
// it, and runs on over the code lines that follow (real code, or short and
// bracket lines such as "}" or "),": no blank line, comment, import or
// docstring), up to 3 lines and not past the hunk's end: the longest such
// run whose next line starts in plain code. This is how
// ../shared/data/devb was built (3-line middles are the most common; a
// closing bracket may end one). Among the candidate hunks of a commit, one is chosen by a random
// draw seeded by Seed and the commit id; with StyleBlock a second draw of
// the same generator chooses the middle's start among the hunk's.
//
// The datapoint's snapshot is the parent revision, which holds the old
// version of the completion file; prefix + middle + suffix is the file after
// the commit; modified lists the files the commit changed that are regular
// files in the parent, the completion file first. Its id is
// "{owner}__{repo}-{commit[:10]}-L{line}", line being the 1-based line of the
// middle's first line in the new file. The truth line holds the middle, the
// commit and the kind: "replace" when the hunk also removed lines, else
// "insert" (for StyleBlock this too is about the whole hunk). Hunks are those of git's zero-context Myers diff of the parent
// and the commit, without rename detection. dataset.Datapoint lines carry the
// competition's keys in its order, "archived": false included; they come
// repository by repository, in the order given, newest commit first.
//
// It writes to OutDir {lang}-{stage}.jsonl, {lang}-{stage}.truth.jsonl and,
// by Layout, either {lang}-{stage}.zip (one stored {owner}__{repo}-{sha}.zip
// per snapshot, files at its root) or repositories-{lang}-{stage}/, each
// snapshot written once. Snapshots hold the parent's regular files (mode
// 0644, or 0755 for executables; in zips dated with the parent's committer
// time, so that the same input gives the same bytes); symlinks and
// submodules are left out. Files are replaced atomically (temporary
// file and rename); snapshot folders already present are kept, as a
// snapshot is named by its commit. With LayoutZip it refuses to run when
// repositories-{lang}-{stage}/ exists, since readers would take it instead.
//
// It runs the git command (found on PATH). Errors start with "fromgit: " and
// name the repository, commit or file; on error no datapoint file is
// written.
func Run(opts Options) (Summary, error) {
	start := time.Now()
	var sum Summary
	o, spec, err := opts.normalize()
	if err != nil {
		return sum, err
	}
	repos := make([]*gitRepo, 0, len(o.Repos))
	defer func() {
		for _, g := range repos {
			g.close()
		}
	}()
	seen := map[string]string{}
	for _, p := range o.Repos {
		g, err := openGitRepo(p, o.Name)
		if err != nil {
			return sum, err
		}
		repos = append(repos, g)
		if prev, dup := seen[g.name]; dup {
			return sum, fmt.Errorf("fromgit: repositories %s and %s are both named %s: give them apart", prev, p, g.name)
		}
		seen[g.name] = p
	}
	set := o.Lang + "-" + o.Stage
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return sum, fmt.Errorf("fromgit: output folder: %w", err)
	}
	dirOut := filepath.Join(o.OutDir, "repositories-"+set)
	var w snapWriter
	if o.Layout == LayoutZip {
		if _, err := os.Stat(dirOut); err == nil {
			return sum, fmt.Errorf("fromgit: %s exists and readers would take it instead of the new %s.zip: remove it or use the folders layout", dirOut, set)
		}
		zw, err := newZipSnapWriter(o.OutDir, filepath.Join(o.OutDir, set+".zip"))
		if err != nil {
			return sum, err
		}
		w = zw
	} else {
		dw, err := newDirSnapWriter(o.OutDir, dirOut)
		if err != nil {
			return sum, err
		}
		w = dw
	}
	defer w.abort()

	var dps []dataset.Datapoint
	var truths []dataset.Truth
	for _, g := range repos {
		rs, picks, err := g.collect(o, spec)
		if err != nil {
			return sum, err
		}
		for _, p := range picks {
			dps = append(dps, p.dp)
			truths = append(truths, p.truth)
		}
		// Each distinct parent once, in name order.
		var parents []string
		trees := map[string]*treeListing{}
		for _, p := range picks {
			if trees[p.dp.Revision] == nil {
				parents = append(parents, p.dp.Revision)
			}
			trees[p.dp.Revision] = p.tree
		}
		slices.Sort(parents)
		rs.Snapshots = len(parents)
		for _, parent := range parents {
			name := strings.ReplaceAll(g.name, "/", "__") + "-" + parent
			n, reused, err := w.write(g, name, parent, trees[parent])
			if err != nil {
				return sum, err
			}
			sum.Bytes += n
			if reused {
				sum.Reused++
			} else {
				sum.Written++
			}
		}
		sum.Snapshots += len(parents)
		sum.Repos = append(sum.Repos, rs)
		g.close()
	}
	out, n, err := w.finish()
	if err != nil {
		return sum, err
	}
	sum.Bytes += n

	var dpBuf, trBuf bytes.Buffer
	dpEnc := json.NewEncoder(&dpBuf)
	dpEnc.SetEscapeHTML(false)
	trEnc := json.NewEncoder(&trBuf)
	trEnc.SetEscapeHTML(false)
	for i := range dps {
		if err := dpEnc.Encode(gitDatapointJSON(dps[i])); err != nil {
			return sum, fmt.Errorf("fromgit: datapoint %s: %w", dps[i].ID, err)
		}
		if err := trEnc.Encode(truths[i]); err != nil {
			return sum, fmt.Errorf("fromgit: datapoint %s: %w", dps[i].ID, err)
		}
	}
	jsonl := filepath.Join(o.OutDir, set+".jsonl")
	truthPath := filepath.Join(o.OutDir, set+".truth.jsonl")
	for _, f := range []struct {
		path string
		data []byte
	}{{jsonl, dpBuf.Bytes()}, {truthPath, trBuf.Bytes()}} {
		if err := writeFileAtomic(f.path, f.data); err != nil {
			return sum, err
		}
		sum.Bytes += int64(len(f.data))
	}
	sum.Files = []string{jsonl, truthPath, out}
	sum.Datapoints = len(dps)
	sum.Elapsed = time.Since(start)
	return sum, nil
}

// gitDatapoint is a datapoint as written, with the competition's "archived"
// key.
type gitDatapoint struct {
	ID       string   `json:"id"`
	Repo     string   `json:"repo"`
	Revision string   `json:"revision"`
	Path     string   `json:"path"`
	Modified []string `json:"modified"`
	Prefix   string   `json:"prefix"`
	Suffix   string   `json:"suffix"`
	Archived bool     `json:"archived"`
}

func gitDatapointJSON(d dataset.Datapoint) gitDatapoint {
	return gitDatapoint{ID: d.ID, Repo: d.Repo, Revision: d.Revision, Path: d.Path,
		Modified: d.Modified, Prefix: d.Prefix, Suffix: d.Suffix}
}

// normalize checks the options and fills in defaults.
func (o Options) normalize() (Options, *grammars.Spec, error) {
	if len(o.Repos) == 0 {
		return o, nil, errors.New("fromgit: no repository given")
	}
	spec := grammars.Lookup(o.Lang)
	if spec == nil {
		return o, nil, fmt.Errorf("fromgit: language %q is not registered in grammars (known: %s)", o.Lang, strings.Join(grammars.Names(), ", "))
	}
	if !pathsafe.SafeComponent(o.Stage) {
		return o, nil, fmt.Errorf("fromgit: stage %q must be a plain name (letters, digits, '.', '_', '-')", o.Stage)
	}
	if o.OutDir == "" {
		return o, nil, errors.New("fromgit: no output folder given")
	}
	if o.Name != "" {
		if len(o.Repos) > 1 {
			return o, nil, fmt.Errorf("fromgit: name %s given for %d repositories: it can only name one", o.Name, len(o.Repos))
		}
		if !pathsafe.ValidRepo(o.Name) {
			return o, nil, fmt.Errorf("fromgit: name %q is not of the form owner/name (letters, digits, '.', '_', '-')", o.Name)
		}
	}
	switch o.Style {
	case "":
		o.Style = StyleSmall
	case StyleSmall, StyleBlock:
	default:
		return o, nil, fmt.Errorf("fromgit: style %q: want %s or %s", o.Style, StyleSmall, StyleBlock)
	}
	switch o.Layout {
	case "":
		o.Layout = LayoutZip
	case LayoutZip, LayoutFolders:
	default:
		return o, nil, fmt.Errorf("fromgit: layout %q: want %s or %s", o.Layout, LayoutZip, LayoutFolders)
	}
	if o.Until == "" {
		o.Until = "HEAD"
	}
	for _, r := range []string{o.Since, o.Until} {
		if strings.HasPrefix(r, "-") || strings.ContainsAny(r, " \t\n\x00") {
			return o, nil, fmt.Errorf("fromgit: revision %q is not a plain revision", r)
		}
	}
	if o.PerRepo <= 0 {
		o.PerRepo = DefaultPerRepo
	}
	if o.MaxCommits <= 0 {
		o.MaxCommits = DefaultMaxCommits
	}
	if o.MaxCommitFiles <= 0 {
		o.MaxCommitFiles = DefaultMaxCommitFiles
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = DefaultMaxFileBytes
	}
	return o, spec, nil
}

// RepoNameFromPath returns the "owner/name" FromGit uses for the repository
// at dir when no name is given: "owner/name" when the folder is named
// "owner+name" (or, for a bare repository, when its parent is, as in a
// mirror's owner+name/repo), else "local/<folder name>" with a trailing
// ".git" removed and other characters than letters, digits, '.', '_' and
// '-' replaced by '-'. A path ending in ".git" names its parent folder.
func RepoNameFromPath(dir string, bare bool) string {
	dir = filepath.Clean(dir)
	base := filepath.Base(dir)
	if base == ".git" {
		dir = filepath.Dir(dir)
		base = filepath.Base(dir)
		bare = false
	}
	if n, ok := plusName(base); ok {
		return n
	}
	if bare {
		if n, ok := plusName(filepath.Base(filepath.Dir(dir))); ok {
			return n
		}
	}
	base = strings.TrimSuffix(base, ".git")
	b := []byte(base)
	for i, c := range b {
		if !(pathsafe.IsASCIILetter(c) || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '-'
		}
	}
	base = strings.Trim(string(b), "-.")
	if base == "" {
		base = "repo"
	}
	return "local/" + base
}

// plusName reads a mirror folder name "owner+name" (".git" suffix allowed).
func plusName(s string) (string, bool) {
	owner, name, ok := strings.Cut(strings.TrimSuffix(s, ".git"), "+")
	if !ok || !pathsafe.SafeComponent(owner) || !pathsafe.SafeComponent(name) {
		return "", false
	}
	return owner + "/" + name, true
}

// ---- git access ----

// gitRepo runs git commands on one repository.
type gitRepo struct {
	path   string // as given
	gitDir string // absolute git folder
	name   string // owner/name
	cat    *exec.Cmd
	catIn  io.WriteCloser
	catOut *bufio.Reader
	catErr *bytes.Buffer
}

// gitEnv is the environment of git commands: the caller's, without
// variables that would point git at another repository, and with no
// prompts, optional locks or pathspec magic.
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
			"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_COMMON_DIR",
			"GIT_CEILING_DIRECTORIES", "GIT_EXTERNAL_DIFF", "GIT_DIFF_OPTS":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "GIT_LITERAL_PATHSPECS=1", "LC_ALL=C")
}

// openGitRepo finds the git folder of the repository at p and names it.
func openGitRepo(p, name string) (*gitRepo, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, fmt.Errorf("fromgit: repository %s: %w", p, err)
	}
	if fi, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("fromgit: repository %s: %w", p, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("fromgit: repository %s: not a folder", p)
	}
	cmd := exec.Command("git", "-C", abs, "rev-parse", "--is-bare-repository", "--absolute-git-dir")
	cmd.Env = gitEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("fromgit: repository %s: not a git repository: %s", p, gitErrText(err, &stderr))
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		return nil, fmt.Errorf("fromgit: repository %s: unexpected git rev-parse output %q", p, out)
	}
	bare := lines[0] == "true"
	g := &gitRepo{path: p, gitDir: lines[1], name: name}
	if g.name == "" {
		nameDir := g.gitDir
		if !bare {
			// A work tree (or a .git folder given directly) is named by its
			// top folder; the git folder may live elsewhere.
			if top, err := g.run("rev-parse", "--show-toplevel"); err == nil && len(bytes.TrimSpace(top)) > 0 {
				nameDir = string(bytes.TrimSpace(top))
			} else if filepath.Base(g.gitDir) == ".git" {
				nameDir = filepath.Dir(g.gitDir)
			}
		}
		g.name = RepoNameFromPath(nameDir, bare)
	}
	return g, nil
}

// gitErrText returns git's own message, or err when git said nothing.
func gitErrText(err error, stderr *bytes.Buffer) string {
	msg := strings.TrimSpace(stderr.String())
	if len(msg) > 500 {
		msg = msg[:500] + "..."
	}
	if msg == "" {
		return err.Error()
	}
	return msg
}

// run runs git with args in the repository and returns its standard output.
func (g *gitRepo) run(args ...string) ([]byte, error) {
	full := append([]string{"--git-dir=" + g.gitDir}, args...)
	cmd := exec.Command("git", full...)
	cmd.Dir = g.gitDir
	cmd.Env = gitEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("fromgit: repository %s: git %s: %s", g.name, args[0], gitErrText(err, &stderr))
	}
	return out, nil
}

// startCat starts the `git cat-file --batch` process that reads objects.
func (g *gitRepo) startCat() error {
	if g.cat != nil {
		return nil
	}
	cmd := exec.Command("git", "--git-dir="+g.gitDir, "cat-file", "--batch")
	cmd.Dir = g.gitDir
	cmd.Env = gitEnv()
	in, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("fromgit: repository %s: git cat-file: %w", g.name, err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("fromgit: repository %s: git cat-file: %w", g.name, err)
	}
	g.catErr = &bytes.Buffer{}
	cmd.Stderr = g.catErr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("fromgit: repository %s: git cat-file: %w", g.name, err)
	}
	g.cat, g.catIn, g.catOut = cmd, in, bufio.NewReaderSize(out, 1<<16)
	return nil
}

// close stops the cat-file process, if any.
func (g *gitRepo) close() {
	if g.cat == nil {
		return
	}
	g.catIn.Close()
	g.cat.Wait()
	g.cat = nil
}

// readObject returns the type and contents of the object sha. Contents over
// max bytes are read and dropped: it then returns nil data and the size.
func (g *gitRepo) readObject(sha string, max int64) (typ string, data []byte, size int64, err error) {
	if err := g.startCat(); err != nil {
		return "", nil, 0, err
	}
	fail := func(err error) (string, []byte, int64, error) {
		g.close()
		return "", nil, 0, fmt.Errorf("fromgit: repository %s: git cat-file %s: %v %s", g.name, sha, err, strings.TrimSpace(g.catErr.String()))
	}
	if _, err := io.WriteString(g.catIn, sha+"\n"); err != nil {
		return fail(err)
	}
	hdr, err := g.catOut.ReadString('\n')
	if err != nil {
		return fail(err)
	}
	f := strings.Fields(hdr)
	if len(f) == 2 && f[1] == "missing" {
		return "", nil, 0, fmt.Errorf("fromgit: repository %s: object %s is missing", g.name, sha)
	}
	if len(f) != 3 {
		return fail(fmt.Errorf("unexpected header %q", hdr))
	}
	size, err = strconv.ParseInt(f[2], 10, 64)
	if err != nil || size < 0 {
		return fail(fmt.Errorf("unexpected header %q", hdr))
	}
	if max >= 0 && size > max {
		if _, err := g.catOut.Discard(int(size) + 1); err != nil {
			return fail(err)
		}
		return f[1], nil, size, nil
	}
	data = make([]byte, size+1)
	if _, err := io.ReadFull(g.catOut, data); err != nil {
		return fail(err)
	}
	return f[1], data[:size], size, nil
}

// commitTime returns the committer time of commit sha, in UTC.
func (g *gitRepo) commitTime(sha string) (time.Time, error) {
	typ, data, _, err := g.readObject(sha, -1)
	if err != nil {
		return time.Time{}, err
	}
	if typ != "commit" {
		return time.Time{}, fmt.Errorf("fromgit: repository %s: %s is a %s, not a commit", g.name, sha, typ)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if line == "" {
			break // end of headers
		}
		if rest, ok := strings.CutPrefix(line, "committer "); ok {
			f := strings.Fields(rest[strings.LastIndexByte(rest, '>')+1:])
			if len(f) >= 1 {
				if ts, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					return time.Unix(ts, 0).UTC(), nil
				}
			}
		}
	}
	return time.Time{}, fmt.Errorf("fromgit: repository %s: commit %s has no committer time", g.name, sha)
}

// commit is one listed commit.
type commit struct {
	sha, parent string // parent "" for a root commit
	order       int    // position in the listing, newest first
}

// listCommits lists up to o.MaxCommits non-merge commits, newest first.
func (g *gitRepo) listCommits(o Options) ([]commit, error) {
	args := []string{"rev-list", "--no-merges", "--parents", "-n", strconv.Itoa(o.MaxCommits), "--end-of-options", o.Until}
	if o.Since != "" {
		args = append(args, "^"+o.Since)
	}
	args = append(args, "--")
	out, err := g.run(args...)
	if err != nil {
		return nil, err
	}
	var cs []commit
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		c := commit{sha: f[0], order: len(cs)}
		if len(f) == 2 {
			c.parent = f[1]
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// rawEntry is one file of `git diff-tree --raw`.
type rawEntry struct {
	oldMode, newMode string
	oldSHA, newSHA   string
	status           byte // A, D, M, T, U, X
	path             string
}

func regularMode(m string) bool { return m == "100644" || m == "100755" }

// diffFiles lists the files changed between parent and c.
func (g *gitRepo) diffFiles(parent, c string) ([]rawEntry, error) {
	out, err := g.run("diff-tree", "-r", "-z", "--raw", "--no-renames", "--no-ext-diff", "--end-of-options", parent, c)
	if err != nil {
		return nil, err
	}
	parts := strings.Split(string(out), "\x00")
	var es []rawEntry
	for i := 0; i+1 < len(parts); i += 2 {
		meta := strings.Fields(strings.TrimPrefix(parts[i], ":"))
		if len(meta) != 5 || meta[4] == "" {
			return nil, fmt.Errorf("fromgit: repository %s: commit %s: unexpected git diff-tree line %q", g.name, c, parts[i])
		}
		es = append(es, rawEntry{oldMode: meta[0], newMode: meta[1], oldSHA: meta[2], newSHA: meta[3], status: meta[4][0], path: parts[i+1]})
	}
	return es, nil
}

// hunk is one hunk of a zero-context diff.
type hunk struct {
	oldCount, newStart, newCount int
	added                        []string // added lines, without "+" and "\n"
}

// span returns the 0-based line range [s, e) of the new file's lines that hunk h
// added, and false when the hunk does not match lines (out of range, or other text).
func (h hunk) span(lines []string) (s, e int, ok bool) {
	s, e = h.newStart-1, h.newStart-1+h.newCount
	if s < 0 || e > len(lines) {
		return 0, 0, false
	}
	for k, a := range h.added {
		if strings.TrimSuffix(lines[s+k], "\n") != a {
			return 0, 0, false
		}
	}
	return s, e, true
}

var hunkHeader = regexp.MustCompile(`^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// diffHunks returns the zero-context hunks of file p between parent and c,
// and whether git found the file binary.
func (g *gitRepo) diffHunks(parent, c, p string) ([]hunk, bool, error) {
	out, err := g.run("diff-tree", "-p", "-U0", "--no-renames", "--no-ext-diff", "--no-textconv", "--no-color",
		"--diff-algorithm=myers", "--end-of-options", parent, c, "--", p)
	if err != nil {
		return nil, false, err
	}
	var hs []hunk
	inHunks := false
	for line := range strings.SplitSeq(string(out), "\n") {
		if strings.HasPrefix(line, "@@ ") {
			m := hunkHeader.FindStringSubmatch(line)
			if m == nil {
				return nil, false, fmt.Errorf("fromgit: repository %s: commit %s: file %s: unexpected hunk header %q", g.name, c, p, line)
			}
			h := hunk{oldCount: 1, newCount: 1}
			if m[1] != "" {
				h.oldCount, _ = strconv.Atoi(m[1])
			}
			h.newStart, _ = strconv.Atoi(m[2])
			if m[3] != "" {
				h.newCount, _ = strconv.Atoi(m[3])
			}
			hs = append(hs, h)
			inHunks = true
			continue
		}
		if !inHunks {
			if strings.HasPrefix(line, "Binary files ") || strings.HasPrefix(line, "GIT binary patch") {
				return nil, true, nil
			}
			continue
		}
		if strings.HasPrefix(line, "+") {
			h := &hs[len(hs)-1]
			h.added = append(h.added, line[1:])
		}
	}
	return hs, false, nil
}

// treeEntry is one regular file of a snapshot.
type treeEntry struct {
	path string
	sha  string
	exec bool
	size int64
}

// treeListing is the regular files of a revision, in git's order.
type treeListing struct {
	files []treeEntry
	bytes int64
}

// listTree lists the regular files of rev. Symlinks, submodules and paths
// a snapshot reader would refuse are left out.
func (g *gitRepo) listTree(rev string) (*treeListing, error) {
	out, err := g.run("ls-tree", "-r", "-l", "-z", "--full-tree", "--end-of-options", rev)
	if err != nil {
		return nil, err
	}
	t := &treeListing{}
	for rec := range strings.SplitSeq(string(out), "\x00") {
		meta, p, ok := strings.Cut(rec, "\t")
		if !ok {
			continue
		}
		f := strings.Fields(meta)
		if len(f) != 4 || f[1] != "blob" || !regularMode(f[0]) {
			continue
		}
		if !snapshotPathOK(p) {
			continue
		}
		size, err := strconv.ParseInt(f[3], 10, 64)
		if f[3] == "BAD" {
			continue // the blob is missing from this (partial) clone: git cannot size it
		}
		if err != nil {
			return nil, fmt.Errorf("fromgit: repository %s: revision %s: file %s: bad size %q", g.name, rev, p, f[3])
		}
		t.files = append(t.files, treeEntry{path: p, sha: f[2], exec: f[0] == "100755", size: size})
		t.bytes += size
	}
	return t, nil
}

// snapshotPathOK reports whether p can be a file of a snapshot that readers
// accept as is: clean, relative, no "\\", no .git element.
func snapshotPathOK(p string) bool {
	if c, reason := pathsafe.Clean(p); reason != "" || c != p || strings.ContainsRune(p, '\\') {
		return false
	}
	_, git := pathsafe.HasGitElement(p)
	return !git
}

// ---- choosing datapoints ----

// pick is one chosen datapoint.
type pick struct {
	order int
	dp    dataset.Datapoint
	truth dataset.Truth
	tree  *treeListing
}

// candidate is a hunk that can be a middle.
type candidate struct {
	path         string
	text         string // new file
	start, count int    // 0-based first line and number of lines
	replace      bool
	// starts are the middles a StyleBlock hunk offers, one drawn when the
	// hunk is chosen; nil for StyleSmall, whose middle is start, count.
	starts []middleSpan
}

// middleSpan is one possible middle: 0-based first line, number of lines.
type middleSpan struct{ start, count int }

// collect chooses the datapoints of one repository.
func (g *gitRepo) collect(o Options, spec *grammars.Spec) (RepoSummary, []pick, error) {
	rs := RepoSummary{Repo: g.name, Path: g.path, SkippedCommits: map[string]int{}, SkippedFiles: map[string]int{}}
	ps := grammars.NewParsers(0) // for the real-code filter of languages without a lexical one
	defer ps.Close()
	cs, err := g.listCommits(o)
	if err != nil {
		return rs, nil, err
	}
	rs.Commits = len(cs)
	order := slices.Clone(cs)
	rng := newSplitMix(uint64(o.Seed) ^ hashString("repo:"+g.name))
	for i := len(order) - 1; i > 0; i-- {
		j := rng.intn(i + 1)
		order[i], order[j] = order[j], order[i]
	}
	skipCommit := func(c commit, reason, detail string) {
		rs.SkippedCommits[reason]++
		if o.Log != nil {
			fmt.Fprintf(o.Log, "skip %s %s: %s%s\n", g.name, shortSHA(c.sha), reason, detail)
		}
	}
	skipFile := func(c commit, p, reason string) {
		rs.SkippedFiles[reason]++
		if o.Log != nil {
			fmt.Fprintf(o.Log, "skip %s %s %s: %s\n", g.name, shortSHA(c.sha), p, reason)
		}
	}
	trees := map[string]*treeListing{} // nil value: snapshot too large
	ids := map[string]bool{}
	var picks []pick
	for _, c := range order {
		if len(picks) >= o.PerRepo {
			break
		}
		rs.Scanned++
		if c.parent == "" {
			skipCommit(c, "root commit", "")
			continue
		}
		es, err := g.diffFiles(c.parent, c.sha)
		if err != nil {
			return rs, nil, err
		}
		if len(es) > o.MaxCommitFiles {
			skipCommit(c, "too many files", fmt.Sprintf(" (%d, over %d)", len(es), o.MaxCommitFiles))
			continue
		}
		var cands []candidate
		for _, e := range es {
			if grammars.ForPath(e.path) != spec {
				continue
			}
			switch {
			case e.status == 'A':
				skipFile(c, e.path, "added")
				continue
			case e.status == 'D':
				skipFile(c, e.path, "deleted")
				continue
			case !regularMode(e.oldMode) || !regularMode(e.newMode) || e.status != 'M':
				skipFile(c, e.path, "not a regular file")
				continue
			}
			if !snapshotPathOK(e.path) {
				skipFile(c, e.path, "unusable path")
				continue
			}
			_, data, size, err := g.readObject(e.newSHA, o.MaxFileBytes)
			if err != nil {
				return rs, nil, err
			}
			if size > o.MaxFileBytes {
				skipFile(c, e.path, "too large")
				continue
			}
			if bytes.IndexByte(data, 0) >= 0 {
				skipFile(c, e.path, "binary")
				continue
			}
			if !utf8.Valid(data) {
				skipFile(c, e.path, "not UTF-8")
				continue
			}
			hs, binary, err := g.diffHunks(c.parent, c.sha, e.path)
			if err != nil {
				return rs, nil, err
			}
			if binary {
				skipFile(c, e.path, "binary")
				continue
			}
			fc, ok := fileCandidates(o.Lang, o.Style, spec, ps, e.path, string(data), hs)
			if !ok {
				skipFile(c, e.path, "diff mismatch")
				continue
			}
			cands = append(cands, fc...)
		}
		if len(cands) == 0 {
			if !hasLangFile(es, spec) {
				skipCommit(c, "no file of the language", "")
			} else {
				skipCommit(c, "no real-code hunk", "")
			}
			continue
		}
		rng := newSplitMix(uint64(o.Seed) ^ hashString("commit:"+c.sha))
		cand := cands[rng.intn(len(cands))]
		if len(cand.starts) > 0 {
			st := cand.starts[rng.intn(len(cand.starts))]
			cand.start, cand.count = st.start, st.count
		}
		tree, seen := trees[c.parent]
		if !seen {
			tree, err = g.listTree(c.parent)
			if err != nil {
				return rs, nil, err
			}
			if len(tree.files) > snapshot.DefaultMaxFiles || tree.bytes > snapshot.DefaultMaxSnapshotBytes {
				tree = nil
			}
			trees[c.parent] = tree
		}
		if tree == nil {
			skipCommit(c, "snapshot too large", "")
			continue
		}
		id := fmt.Sprintf("%s-%s-L%d", strings.ReplaceAll(g.name, "/", "__"), shortSHA(c.sha), cand.start+1)
		if ids[id] {
			skipCommit(c, "duplicate id", " "+id)
			continue
		}
		ids[id] = true
		picks = append(picks, makePick(g.name, c, cand, es, tree))
	}
	slices.SortFunc(picks, func(a, b pick) int { return a.order - b.order })
	rs.Datapoints = len(picks)
	return rs, picks, nil
}

// hasLangFile reports whether a modified (not added or deleted) file of the
// language is among es.
func hasLangFile(es []rawEntry, spec *grammars.Spec) bool {
	for _, e := range es {
		if e.status == 'M' && grammars.ForPath(e.path) == spec {
			return true
		}
	}
	return false
}

// makePick builds the datapoint and truth of a chosen hunk.
func makePick(name string, c commit, cand candidate, es []rawEntry, tree *treeListing) pick {
	lines := splitLines(cand.text)
	prefix := strings.Join(lines[:cand.start], "")
	middle := strings.Join(lines[cand.start:cand.start+cand.count], "")
	suffix := strings.Join(lines[cand.start+cand.count:], "")
	modified := []string{cand.path}
	for _, e := range es {
		if e.path != cand.path && e.status != 'A' && regularMode(e.oldMode) {
			if snapshotPathOK(e.path) {
				modified = append(modified, e.path)
			}
		}
	}
	id := fmt.Sprintf("%s-%s-L%d", strings.ReplaceAll(name, "/", "__"), shortSHA(c.sha), cand.start+1)
	kind := "insert"
	if cand.replace {
		kind = "replace"
	}
	return pick{
		order: c.order,
		dp: dataset.Datapoint{ID: id, Repo: name, Revision: c.parent, Path: cand.path, Modified: modified,
			Prefix: prefix, Suffix: suffix},
		truth: dataset.Truth{ID: id, Middle: middle, Commit: c.sha, Kind: kind},
		tree:  tree,
	}
}

func shortSHA(sha string) string {
	if len(sha) > 10 {
		return sha[:10]
	}
	return sha
}

// fileCandidates returns the hunks of one file that can give middles of
// the style. ok is false when the diff does not match the file's text. ps parses
// the file for the languages whose multi-line strings and comments are found in the
// syntax tree.
func fileCandidates(lang, style string, spec *grammars.Spec, ps *grammars.Parsers, p, text string, hs []hunk) ([]candidate, bool) {
	lines := splitLines(text)
	var code []bool
	codeOf := func() []bool { // computed once, for the first hunk that needs it
		if code == nil {
			code = fileCodeLines(lang, spec, ps, text, lines)
		}
		return code
	}
	var out []candidate
	for _, h := range hs {
		if h.newCount != len(h.added) {
			return nil, false
		}
		if style == StyleBlock {
			c, ok := blockCandidate(lang, spec, p, text, lines, h, codeOf)
			if !ok {
				return nil, false
			}
			if c != nil {
				out = append(out, *c)
			}
			continue
		}
		if h.newCount < 1 || h.newCount > 3 {
			continue
		}
		s, e, ok := h.span(lines)
		if !ok {
			return nil, false
		}
		code := codeOf()
		ok = code[e]
		for i := s; i < e && ok; i++ {
			ok = code[i] && realCodeLine(lang, spec, lines[i])
		}
		if ok {
			out = append(out, candidate{path: p, text: text, start: s, count: h.newCount, replace: h.oldCount > 0})
		}
	}
	return out, true
}

// blockCandidate returns the StyleBlock candidate of hunk h, or nil when
// it adds fewer than BlockMinLines non-blank lines or holds no middle. ok is
// false when the hunk does not match lines. code returns the file's
// fileCodeLines (called only when the hunk is big enough).
func blockCandidate(lang string, spec *grammars.Spec, p, text string, lines []string, h hunk, code func() []bool) (*candidate, bool) {
	nonBlank := 0
	for _, a := range h.added {
		if strings.TrimSpace(a) != "" {
			nonBlank++
		}
	}
	if nonBlank < BlockMinLines {
		return nil, true
	}
	s, e, ok := h.span(lines)
	if !ok {
		return nil, false
	}
	cl := code()
	var starts []middleSpan
	before := 0 // non-blank hunk lines before line i
	for i := s; i < e; i++ {
		if before >= BlockMinBefore && cl[i] && realCodeLine(lang, spec, lines[i]) {
			n := 1
			for n < blockMaxMiddle && i+n < e && cl[i+n] && plainCodeLine(spec, lines[i+n]) {
				n++
			}
			// The longest run whose next line starts in plain code.
			for n > 0 && !cl[i+n] {
				n--
			}
			if n > 0 {
				starts = append(starts, middleSpan{i, n})
			}
		}
		if strings.TrimSpace(lines[i]) != "" {
			before++
		}
	}
	if len(starts) == 0 {
		return nil, true
	}
	return &candidate{path: p, text: text, start: starts[0].start, count: starts[0].count,
		replace: h.oldCount > 0, starts: starts}, true
}

// splitLines splits text into lines that keep their "\n"; joined, they
// are text again.
func splitLines(text string) []string {
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// ---- the real-code filter ----

// pyImport matches the start of a Python import statement (for import
// statements continued over lines).
var pyImport = regexp.MustCompile(`^(import\s|from\s+\S+\s+import(\s|\(|\\|$))`)

// realCodeLine reports whether one added line is code worth completing:
// not blank, not over maxMiddleLineBytes, at least minCodeChars non-space
// characters, not only brackets and punctuation, not a line the language's
// grammars.Spec.SkipLine matches (comments, imports, package lines, Python
// docstring starts), and not only keywords of the language.
func realCodeLine(lang string, spec *grammars.Spec, line string) bool {
	if len(line) > maxMiddleLineBytes {
		return false
	}
	t := strings.TrimSpace(line)
	n := 0
	punct := true
	for _, r := range t {
		if r == ' ' || r == '\t' {
			continue
		}
		n++
		if !strings.ContainsRune("()[]{},;:.", r) {
			punct = false
		}
	}
	if n < minCodeChars || punct {
		return false
	}
	return plainCodeLine(spec, line) && !keywordsOnly(spec, t)
}

// plainCodeLine reports whether one added line may continue a StyleBlock
// middle: not blank, not over maxMiddleLineBytes, and not a line the language's
// Spec.SkipLine matches (a comment, import, package line, docstring start). Unlike
// [realCodeLine] it takes short lines and lines of brackets ("}", "),"), which end
// statements in a block.
func plainCodeLine(spec *grammars.Spec, line string) bool {
	if len(line) > maxMiddleLineBytes {
		return false
	}
	t := strings.TrimSpace(line)
	if t == "" {
		return false
	}
	if spec.SkipLine != nil && spec.SkipLine.MatchString(t) {
		return false
	}
	return true
}

// keywordsOnly reports whether t has no literal and no word that is not a
// keyword of the language, such as "else:", "} finally {" or "return None".
func keywordsOnly(spec *grammars.Spec, t string) bool {
	for i := 0; i < len(t); {
		c := t[i]
		switch {
		case c == '"' || c == '\'' || c == '`' || '0' <= c && c <= '9' || c >= utf8.RuneSelf:
			return false
		case c == '_' || pathsafe.IsASCIILetter(c):
			j := i + 1
			for j < len(t) && (t[j] == '_' || pathsafe.IsASCIILetter(t[j]) || '0' <= t[j] && t[j] <= '9') {
				j++
			}
			if !spec.IsKeyword(t[i:j]) {
				return false
			}
			i = j
		default:
			i++
		}
	}
	return true
}

// fileCodeLines returns, for each line start and for the end of the text
// (len(lines)+1 values), whether it is plain code, the same way for both styles:
// codeLines' lexical scan for Kotlin and Python, treeCodeLines' syntax tree for the
// other languages.
func fileCodeLines(lang string, spec *grammars.Spec, ps *grammars.Parsers, text string, lines []string) []bool {
	if lang == "kotlin" || lang == "python" {
		return codeLines(lang, lines)
	}
	return treeCodeLines(ps, spec, text, len(lines))
}

// codeLines returns, for each line start and for the end of the text
// (len(lines)+1 values), whether it is plain code: not inside a multi-line
// string or comment (Python triple-quoted strings; Kotlin raw strings and
// nested block comments) nor inside a Python import continued over lines.
func codeLines(lang string, lines []string) []bool {
	code := make([]bool, len(lines)+1)
	var str byte    // quote of the open triple-quoted or raw string, 0 if none
	depth := 0      // Kotlin block comment nesting
	importCont := 0 // Python: 1 inside "import (", 2 after a backslash
	for i, ln := range lines {
		code[i] = str == 0 && depth == 0 && importCont == 0
		if lang == "python" {
			t := strings.TrimSpace(ln)
			switch {
			case importCont == 1:
				if strings.Contains(t, ")") {
					importCont = 0
				}
			case importCont == 2:
				if !strings.HasSuffix(t, "\\") {
					importCont = 0
				}
			case code[i] && pyImport.MatchString(t):
				if strings.Contains(t, "(") && !strings.Contains(t, ")") {
					importCont = 1
				} else if strings.HasSuffix(t, "\\") {
					importCont = 2
				}
			}
		}
		for j := 0; j < len(ln); {
			c := ln[j]
			switch {
			case depth > 0:
				switch {
				case strings.HasPrefix(ln[j:], "/*"):
					depth++
					j += 2
				case strings.HasPrefix(ln[j:], "*/"):
					depth--
					j += 2
				default:
					j++
				}
			case str != 0:
				switch {
				case c == '\\' && lang == "python":
					j += 2
				case c == str && strings.HasPrefix(ln[j:], strings.Repeat(string(str), 3)):
					j += 3
					for lang == "kotlin" && j < len(ln) && ln[j] == '"' {
						j++ // """" closes with the last three quotes
					}
					str = 0
				default:
					j++
				}
			case lang == "python" && c == '#', lang == "kotlin" && strings.HasPrefix(ln[j:], "//"):
				j = len(ln)
			case lang == "kotlin" && strings.HasPrefix(ln[j:], "/*"):
				depth = 1
				j += 2
			case c == '"' || c == '\'':
				if strings.HasPrefix(ln[j:], strings.Repeat(string(c), 3)) && (lang == "python" || c == '"') {
					str = c
					j += 3
					continue
				}
				// A one-line string or char literal ends at its quote or
				// at the end of the line.
				j++
				for j < len(ln) && ln[j] != c && ln[j] != '\n' {
					if ln[j] == '\\' {
						j++
					}
					j++
				}
				j++
			default:
				j++
			}
		}
	}
	code[len(lines)] = str == 0 && depth == 0 && importCont == 0
	return code
}

// treeCodeLines is codeLines from the syntax tree, for languages without a
// lexical scanner: a line start (or the end of the text, the last of the
// nLines+1 values) is code unless it lies inside a node of one of the spec's
// Comments or Strings types that spans lines (a node ending at the very start
// of a line, as a Rust line comment with its line break does, leaves that line
// code). When the file cannot be parsed, no line is code.
func treeCodeLines(ps *grammars.Parsers, spec *grammars.Spec, text string, nLines int) []bool {
	code := make([]bool, nLines+1)
	tree, _, err := ps.Parse(spec, []byte(text))
	if err != nil {
		return code
	}
	defer tree.Close()
	for i := range code {
		code[i] = true
	}
	stack := []*sitter.Node{tree.RootNode()}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		start, end := n.StartPoint(), n.EndPoint()
		if start.Row == end.Row {
			continue // a node on one line holds no line start
		}
		if t := spec.TypeOf(n); spec.Comments[t] || spec.Strings[t] {
			last := int(end.Row)
			if end.Column == 0 {
				last--
			}
			for r := int(start.Row) + 1; r <= last && r < len(code); r++ {
				code[r] = false
			}
			continue
		}
		stack = append(stack, grammars.Children(n)...)
	}
	return code
}

// ---- seeded choice ----

// splitMix is the SplitMix64 generator: small, and the same on every
// platform and Go version, so that a seed always gives the same dataset.
type splitMix struct{ s uint64 }

func newSplitMix(seed uint64) *splitMix { return &splitMix{s: seed} }

func (r *splitMix) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn returns a number in [0, n) for n > 0.
func (r *splitMix) intn(n int) int { return int(r.next() % uint64(n)) }

// hashString is 64-bit FNV-1a.
func hashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// ---- writing ----

// writeFileAtomic writes data to p through a temporary file and a rename, durably.
func writeFileAtomic(p string, data []byte) error {
	if err := atomicfile.WriteFile(p, data, atomicfile.Options{Sync: true}); err != nil {
		return fmt.Errorf("fromgit: write %s: %w", p, err)
	}
	return nil
}

// snapWriter writes snapshots in one layout.
type snapWriter interface {
	// write writes the snapshot name, the files of tree at revision rev,
	// and returns the bytes written and whether an existing copy was kept.
	write(g *gitRepo, name, rev string, tree *treeListing) (int64, bool, error)
	// finish completes the output and returns its path and the bytes
	// written by finishing.
	finish() (string, int64, error)
	// abort removes temporary files; after finish it does nothing.
	abort()
}

// zipSnapWriter writes {lang}-{stage}.zip: stored inner zips, each built
// in a temporary file first so that its size and CRC go in the local header.
type zipSnapWriter struct {
	dir, final string
	f          *atomicfile.File
	zw         *zip.Writer
	inner      int64 // bytes of inner zips, already reported by write
	done       bool
}

func newZipSnapWriter(dir, final string) (*zipSnapWriter, error) {
	f, err := atomicfile.Create(final, atomicfile.Options{Sync: true})
	if err != nil {
		return nil, fmt.Errorf("fromgit: write %s: %w", final, err)
	}
	return &zipSnapWriter{dir: dir, final: final, f: f, zw: zip.NewWriter(f)}, nil
}

func (w *zipSnapWriter) write(g *gitRepo, name, rev string, tree *treeListing) (int64, bool, error) {
	mtime, err := g.commitTime(rev)
	if err != nil {
		return 0, false, err
	}
	tmp, err := os.CreateTemp(w.dir, ".snapshot-*.zip")
	if err != nil {
		return 0, false, fmt.Errorf("fromgit: snapshot %s: %w", name, err)
	}
	defer func() {
		tmp.Close()
		os.Remove(tmp.Name())
	}()
	crc := crc32.NewIEEE()
	cnt := &countWriter{}
	bw := bufio.NewWriterSize(io.MultiWriter(tmp, crc, cnt), 1<<20)
	inner := zip.NewWriter(bw)
	for _, e := range tree.files {
		typ, data, _, err := g.readObject(e.sha, -1)
		if err != nil {
			return 0, false, err
		}
		if typ != "blob" {
			return 0, false, fmt.Errorf("fromgit: snapshot %s: %s is a %s, not a file", name, e.path, typ)
		}
		h := &zip.FileHeader{Name: e.path, Method: zip.Deflate, Modified: mtime}
		h.SetMode(0o644)
		if e.exec {
			h.SetMode(0o755)
		}
		fw, err := inner.CreateHeader(h)
		if err != nil {
			return 0, false, fmt.Errorf("fromgit: snapshot %s: %s: %w", name, e.path, err)
		}
		if _, err := fw.Write(data); err != nil {
			return 0, false, fmt.Errorf("fromgit: snapshot %s: %s: %w", name, e.path, err)
		}
	}
	if err := inner.Close(); err != nil {
		return 0, false, fmt.Errorf("fromgit: snapshot %s: %w", name, err)
	}
	if err := bw.Flush(); err != nil {
		return 0, false, fmt.Errorf("fromgit: snapshot %s: %w", name, err)
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return 0, false, fmt.Errorf("fromgit: snapshot %s: %w", name, err)
	}
	h := &zip.FileHeader{Name: name + ".zip", Method: zip.Store, Modified: mtime,
		CRC32: crc.Sum32(), CompressedSize64: uint64(cnt.n), UncompressedSize64: uint64(cnt.n)}
	h.SetMode(0o644)
	fw, err := w.zw.CreateRaw(h)
	if err != nil {
		return 0, false, fmt.Errorf("fromgit: write %s: %s: %w", w.final, name, err)
	}
	if _, err := io.Copy(fw, tmp); err != nil {
		return 0, false, fmt.Errorf("fromgit: write %s: %s: %w", w.final, name, err)
	}
	w.inner += cnt.n
	return cnt.n, false, nil
}

func (w *zipSnapWriter) finish() (string, int64, error) {
	if err := w.zw.Close(); err != nil {
		return "", 0, fmt.Errorf("fromgit: write %s: %w", w.final, err)
	}
	fi, err := w.f.Stat()
	if err != nil {
		return "", 0, fmt.Errorf("fromgit: write %s: %w", w.final, err)
	}
	written := fi.Size()
	if err := w.f.Commit(); err != nil {
		return "", 0, fmt.Errorf("fromgit: write %s: %w", w.final, err)
	}
	w.done = true
	// The inner zips were counted as they were written; add the rest.
	return w.final, written - w.inner, nil
}

func (w *zipSnapWriter) abort() {
	if !w.done {
		w.f.Abort()
	}
}

// countWriter counts the bytes written through it.
type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

// dirSnapWriter writes repositories-{lang}-{stage}/{name}/ folders, each
// built in a temporary folder and renamed into place.
type dirSnapWriter struct {
	tmpDir, root string
}

func newDirSnapWriter(tmpDir, root string) (*dirSnapWriter, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("fromgit: write %s: %w", root, err)
	}
	return &dirSnapWriter{tmpDir: tmpDir, root: root}, nil
}

func (w *dirSnapWriter) write(g *gitRepo, name, rev string, tree *treeListing) (int64, bool, error) {
	final := filepath.Join(w.root, name)
	if fi, err := os.Stat(final); err == nil && fi.IsDir() {
		return 0, true, nil
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, false, fmt.Errorf("fromgit: snapshot %s: %w", name, err)
	}
	tmp, err := os.MkdirTemp(w.tmpDir, ".snapshot-")
	if err != nil {
		return 0, false, fmt.Errorf("fromgit: snapshot %s: %w", name, err)
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(tmp)
		}
	}()
	root, err := os.OpenRoot(tmp)
	if err != nil {
		return 0, false, fmt.Errorf("fromgit: snapshot %s: %w", name, err)
	}
	defer root.Close()
	var n int64
	for _, e := range tree.files {
		typ, data, _, err := g.readObject(e.sha, -1)
		if err != nil {
			return 0, false, err
		}
		if typ != "blob" {
			return 0, false, fmt.Errorf("fromgit: snapshot %s: %s is a %s, not a file", name, e.path, typ)
		}
		if d := path.Dir(e.path); d != "." {
			if err := root.MkdirAll(d, 0o755); err != nil {
				return 0, false, fmt.Errorf("fromgit: snapshot %s: %s: %w", name, e.path, err)
			}
		}
		perm := fs.FileMode(0o644)
		if e.exec {
			perm = 0o755
		}
		if err := root.WriteFile(e.path, data, perm); err != nil {
			return 0, false, fmt.Errorf("fromgit: snapshot %s: %s: %w", name, e.path, err)
		}
		n += int64(len(data))
	}
	if err := os.Rename(tmp, final); err != nil {
		return 0, false, fmt.Errorf("fromgit: snapshot %s: %w", name, err)
	}
	ok = true
	return n, false, nil
}

func (w *dirSnapWriter) finish() (string, int64, error) { return w.root, 0, nil }

func (w *dirSnapWriter) abort() {}
