package snapshot

// Design note: the repository walker.
//
// One walker decides which files of a repository folder are source worth chunking,
// for `repoctx chunk`, `index` and `query` alike. It walks the folder itself (not
// fs.WalkDir) for two reasons: ignore files are read per folder on the way down, so
// each folder's patterns apply below it only, and entries are visited in the order
// of their full slash paths (a folder "a" sorts as "a/"), so the walk order is the
// order of sort.Strings over the yielded paths, the same as Snapshot.Paths.
//
// Ignore patterns are parsed and matched by go-git's plumbing/format/gitignore
// (ParsePattern, Pattern.Match), which implements gitignore(5) matching with a pattern
// "domain" (the folder the pattern file lives in); a folder's entries are matched in
// NewMatcher's order (the last matching pattern decides), skipping the patterns a
// cheap component test rules out (see ignorePattern). The walker never descends into a
// folder that is excluded, which gives git's rule that a file cannot be re-included
// when a parent folder is excluded.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/store"
)

// SkipReason says why Walk left a file or folder out.
type SkipReason int

// Skip reasons, in the order Walk checks them. A file or folder is counted under the
// first reason that applies.
const (
	SkipNone       SkipReason = iota // not skipped
	SkipVCS                          // version-control metadata: .git, .hg, .svn (files or folders)
	SkipExcluded                     // matched a WalkOptions.Exclude pattern
	SkipIgnored                      // matched a .gitignore, .ignore or .git/info/exclude pattern
	SkipVendored                     // a vendored folder: vendor/, node_modules/, a Python virtualenv, ...
	SkipSymlink                      // a symlink that is broken, loops, leaves the root or names a folder
	SkipNotRegular                   // a device, socket or named pipe
	SkipLanguage                     // of no registered language, or not of WalkOptions.Languages
	SkipTooLarge                     // over WalkOptions.MaxFileBytes
	SkipUnreadable                   // could not be read (permission denied, I/O error)
	SkipBinary                       // a NUL byte in the first 8000 bytes, and not UTF-16 text
	SkipGenerated                    // a comment in the first lines says the file is generated
	SkipMinified                     // minified JavaScript or CSS
	numSkipReasons
)

var skipPhrases = [numSkipReasons]string{
	SkipNone:       "not skipped",
	SkipVCS:        "version-control metadata",
	SkipExcluded:   "excluded by --exclude",
	SkipIgnored:    "ignored by .gitignore, .ignore or .git/info/exclude",
	SkipVendored:   "vendored folder",
	SkipSymlink:    "symlink not followed (broken, a loop, out of the root, or to a folder)",
	SkipNotRegular: "not a regular file",
	SkipLanguage:   "not of a chosen language (--langs) or of no language repoctx parses",
	SkipTooLarge:   "over the size limit",
	SkipUnreadable: "unreadable",
	SkipBinary:     "binary",
	SkipGenerated:  "generated",
	SkipMinified:   "minified",
}

// String returns the reason as a short phrase, e.g. "vendored folder".
func (r SkipReason) String() string {
	if r < 0 || r >= numSkipReasons {
		return fmt.Sprintf("SkipReason(%d)", int(r))
	}
	return skipPhrases[r]
}

// SkipReasons returns every reason but SkipNone, in check order.
func SkipReasons() []SkipReason {
	out := make([]SkipReason, 0, numSkipReasons-1)
	for r := SkipNone + 1; r < numSkipReasons; r++ {
		out = append(out, r)
	}
	return out
}

// File is one file Walk yields.
type File struct {
	// Path is slash-separated and relative to the walk's root ("src/app.py").
	Path string
	// Lang is the grammar name chosen by extension ("kotlin", "python"), or "" when no
	// registered language claims the file (only with WalkOptions.OtherFiles).
	Lang string
	// Data is the file's raw content, at most WalkOptions.MaxFileBytes bytes. The walker
	// does not keep or reuse it: fn may hold on to it.
	Data []byte

	info  fs.FileInfo // the entry's metadata, when the walker had it
	known bool        // not read: WalkOptions.Known vouched for it; sum holds its hash
	sum   [32]byte
	size  int64
}

// Vouched reports whether the walker did not read the file because
// WalkOptions.Known vouched for it: Data is then nil and Sum is its SHA-256.
func (f File) Vouched() bool { return f.known }

// Sum returns the SHA-256 WalkOptions.Known gave for a file it vouched for (zero for
// a file read: hash its Data).
func (f File) Sum() [32]byte { return f.sum }

// Info returns the file's metadata as the walker saw it before reading it (nil when
// it had none).
func (f File) Info() fs.FileInfo { return f.info }

// WalkOptions says which files Walk yields. The zero value applies every rule: ignore
// files, vendored and generated code skipped, files of the registered languages only,
// chunker.DefaultMaxFileBytes as the size limit.
type WalkOptions struct {
	// NoIgnoreFiles turns off .gitignore (in every folder), .ignore (in every folder,
	// ripgrep's convention; it overrides the .gitignore beside it) and .git/info/exclude.
	// Exclude, the vendored and generated rules and the checks on content still apply.
	NoIgnoreFiles bool
	// KeepVendored turns off skipping vendored folders (see VendoredDir).
	KeepVendored bool
	// KeepGenerated turns off skipping generated and minified files (see IsGenerated
	// and IsMinified).
	KeepGenerated bool
	// Exclude holds patterns in gitignore syntax, matched against paths relative to the
	// root as if they were lines of a .gitignore at the root, after every ignore file
	// (so they win): "*.min.js" matches at any depth, "/build" and "docs/*.py" are
	// anchored at the root, "gen/" matches folders only, "**" spans folders. A pattern
	// starting with "!" is an error (Exclude only excludes).
	Exclude []string
	// Languages are grammar names (grammars.Names); only files of these languages are
	// yielded. Empty means every registered language. An unknown name is an error.
	Languages []string
	// OtherFiles also yields files no registered language claims (File.Lang "").
	OtherFiles bool
	// MaxFileBytes is the size limit in bytes; larger files are skipped as
	// SkipTooLarge without being read. <= 0 means chunker.DefaultMaxFileBytes.
	MaxFileBytes int64
	// OnSkip, if set, is called for every skipped file or folder with its slash path
	// relative to the root (a folder's path ends in "/") and the reason, from the
	// goroutine that called Walk.
	OnSkip func(path string, r SkipReason)

	// Known, if set, vouches for files an earlier walk accepted and that did not
	// change since (see [FolderState.Known]): it gets a file's path and metadata
	// before the read and returns its SHA-256 and true to have it yielded unread
	// (File.Vouched).
	Known func(path string, fi fs.FileInfo) ([32]byte, bool)
}

// WalkStats counts what one Walk did.
type WalkStats struct {
	// Files and Bytes count the files yielded and their raw size in bytes.
	Files int
	Bytes int64
	// Skipped counts skips by reason. A skipped folder counts once: what it holds is
	// not looked at.
	Skipped map[SkipReason]int
}

// TotalSkipped returns the number of files and folders skipped, all reasons.
func (s WalkStats) TotalSkipped() int {
	n := 0
	for _, c := range s.Skipped {
		n += c
	}
	return n
}

// SkipSummary returns the skip counts as one line in check order, e.g.
// "12 ignored by .gitignore, .ignore or .git/info/exclude, 1 binary", or "none".
func (s WalkStats) SkipSummary() string {
	var parts []string
	for _, r := range SkipReasons() {
		if n := s.Skipped[r]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, r))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// Add adds the counts of o to s.
func (s *WalkStats) Add(o WalkStats) {
	s.Files += o.Files
	s.Bytes += o.Bytes
	for r, n := range o.Skipped {
		s.count(r, n)
	}
}

func (s *WalkStats) count(r SkipReason, n int) {
	if s.Skipped == nil {
		s.Skipped = map[SkipReason]int{}
	}
	s.Skipped[r] += n
}

// Walk calls fn for every file under the folder root that opts lets through, in the
// order of their slash paths (byte order, as sort.Strings sorts them), and returns
// what it yielded and skipped.
//
// It reads the folder through os.Root: a symlink is followed only when its target is
// a regular file inside root (the file is yielded under the link's name); symlinks
// to folders are never followed, so loops cannot recur. See WalkFS for the rules.
//
// It returns an error when root cannot be opened or read, a *repoctx.OptionError when
// opts is invalid (an unknown language, a "!" exclude pattern; Option names the
// flag: "langs", "exclude"), ctx.Err() when ctx is done, or the first
// error fn returns, unchanged (the walk stops there). Folders and files below root
// that cannot be read are skipped as SkipUnreadable, not errors. The stats count
// what was done up to the error.
func Walk(ctx context.Context, root string, opts WalkOptions, fn func(File) error) (WalkStats, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return WalkStats{}, fmt.Errorf("snapshot: walk %s: %w", root, err)
	}
	defer r.Close()
	fsys := NewRootFS(r)
	defer fsys.Close()
	return WalkFS(ctx, fsys, opts, fn)
}

// WalkFS is Walk over fsys, whose root is the repository root. These rules apply, in
// this order (the first that matches names the SkipReason):
//
//  1. .git, .hg and .svn entries are skipped (SkipVCS);
//  2. paths matching opts.Exclude are skipped (SkipExcluded);
//  3. unless opts.NoIgnoreFiles, paths matching the patterns of .git/info/exclude, of
//     every .gitignore and of every .ignore on the way down are skipped (SkipIgnored;
//     gitignore(5) semantics: a folder's patterns apply below it, later and deeper
//     patterns win, "!" re-includes, a trailing "/" matches folders only, a file
//     below an excluded folder cannot be re-included). The global core.excludesFile
//     is not read, so results do not depend on the user's git configuration;
//  4. unless opts.KeepVendored, vendored folders are skipped (SkipVendored; see
//     VendoredDir);
//  5. symlinks are followed to regular files only (SkipSymlink), devices, sockets
//     and pipes are skipped (SkipNotRegular);
//  6. files of languages not asked for are skipped (SkipLanguage);
//  7. files over the size limit are skipped unread (SkipTooLarge), unreadable ones
//     as SkipUnreadable;
//  8. a NUL byte in the first 8000 bytes means binary (git's buffer_is_binary), unless
//     the bytes look like UTF-16 (a byte-order mark, or NULs only at odd or only at
//     even offsets) (SkipBinary);
//  9. unless opts.KeepGenerated, generated and minified files are skipped
//     (SkipGenerated, SkipMinified; see IsGenerated and IsMinified).
//
// Whether symlinks can lead out of the root depends on fsys: os.Root.FS confines
// them (Walk uses it), os.DirFS does not.
//
// With more than one processor (GOMAXPROCS), files are read and checked (steps 7-9)
// on reader goroutines, at most 32 files ahead of what fn has been given; fn and
// opts.OnSkip are still called in walk order from the calling goroutine, with the
// same files, bytes and reasons as a walk on one processor. fsys must therefore be
// safe for concurrent use (its Open is called from several goroutines).
func WalkFS(ctx context.Context, fsys fs.FS, opts WalkOptions, fn func(File) error) (WalkStats, error) {
	w := &walker{ctx: ctx, fsys: fsys, opts: opts, fn: fn}
	if err := w.init(); err != nil {
		return WalkStats{}, err
	}
	var base []ignorePattern
	if !opts.NoIgnoreFiles {
		if data, err := fs.ReadFile(fsys, ".git/info/exclude"); err == nil {
			base = parsePatterns(data, nil)
		}
	}
	w.startReaders()
	defer w.stopReaders()
	if err := w.dir(".", nil, base); err != nil {
		return w.st, err
	}
	if err := w.flush(true); err != nil {
		return w.st, err
	}
	return w.st, nil
}

type walker struct {
	ctx     context.Context
	fsys    fs.FS
	opts    WalkOptions
	fn      func(File) error
	exclude []ignorePattern // WalkOptions.Exclude
	langs   map[string]bool // nil: every registered language
	st      WalkStats

	// Read-ahead: with more than one processor, files are read and checked (binary,
	// generated, minified) by reader goroutines while the walk goes on; what they
	// found is delivered (fn, OnSkip, st) in walk order on the walking goroutine, so
	// the walk's outcome does not depend on how the reads interleave.
	jobs    chan *readJob // to the readers; nil: files are read on the walking goroutine
	readers sync.WaitGroup
	pending []walkEvent // found, not delivered yet, in walk order
}

// readAhead is the most events (files and skips) found but not delivered: it bounds
// the memory of files read ahead (at most readAhead × MaxFileBytes).
const readAhead = 32

// walkEvent is a file to yield or a skip to report, in walk order.
type walkEvent struct {
	file  File // the file, when job is nil and skip is SkipNone
	job   *readJob
	path  string // a skip's path (a folder's without the trailing "/")
	isDir bool
	skip  SkipReason
}

// readJob is a file to read and check, off the walking goroutine.
type readJob struct {
	file File // Path, Lang, info; Data once done
	skip SkipReason
	done chan struct{}
}

// run reads the file and checks its content (steps 7-9 of WalkFS).
func (j *readJob) run(fsys fs.FS, opts *WalkOptions) {
	data, err := readLimited(fsys, j.file.Path, opts.MaxFileBytes)
	switch {
	case errors.Is(err, errTooLarge):
		j.skip = SkipTooLarge
	case err != nil:
		j.skip = SkipUnreadable
	case IsBinary(data):
		j.skip = SkipBinary
	case !opts.KeepGenerated && IsGenerated(data):
		j.skip = SkipGenerated
	case !opts.KeepGenerated && IsMinified(j.file.Path, data):
		j.skip = SkipMinified
	default:
		j.file.Data, j.file.size = data, int64(len(data))
	}
}

// startReaders starts one reader per processor when there are at least two.
func (w *walker) startReaders() {
	n := runtime.GOMAXPROCS(0)
	if n < 2 {
		return
	}
	w.jobs = make(chan *readJob, readAhead)
	for range n {
		w.readers.Add(1)
		go func() {
			defer w.readers.Done()
			for j := range w.jobs {
				j.run(w.fsys, &w.opts)
				close(j.done)
			}
		}()
	}
}

// stopReaders stops the readers once the files given to them are read.
func (w *walker) stopReaders() {
	if w.jobs != nil {
		close(w.jobs)
		w.readers.Wait()
	}
}

// emit delivers ev, after what is pending; a read is given to the readers and
// delivered later (at the latest once readAhead events are pending). It returns fn's
// error.
func (w *walker) emit(ev walkEvent) error {
	if ev.job == nil && len(w.pending) == 0 {
		return w.deliver(ev)
	}
	if ev.job != nil && w.jobs == nil {
		ev.job.run(w.fsys, &w.opts)
		if len(w.pending) == 0 {
			return w.deliver(ev)
		}
	} else if ev.job != nil {
		ev.job.done = make(chan struct{})
		w.jobs <- ev.job
	}
	w.pending = append(w.pending, ev)
	return w.flush(false)
}

// flush delivers the pending events in order: those whose read is done, and more
// (waiting for their reads) while readAhead or more are pending; all of them when
// all is set. It returns fn's error, or ctx's once it is done (as the walk on one
// goroutine checks it before each entry, no event is delivered after that).
func (w *walker) flush(all bool) error {
	n := 0
	defer func() {
		k := copy(w.pending, w.pending[n:])
		clear(w.pending[k:]) // no file's bytes stay referenced
		w.pending = w.pending[:k]
	}()
	for ; n < len(w.pending); n++ {
		ev := w.pending[n]
		if j := ev.job; j != nil && j.done != nil {
			select {
			case <-j.done:
			default:
				if !all && len(w.pending)-n < readAhead {
					return nil
				}
				<-j.done
			}
		}
		if err := w.ctx.Err(); err != nil {
			return err
		}
		if err := w.deliver(ev); err != nil {
			n++
			return err
		}
	}
	return nil
}

// deliver reports a skip or yields a file (fn's error).
func (w *walker) deliver(ev walkEvent) error {
	f, skip := ev.file, ev.skip
	if j := ev.job; j != nil {
		f, skip = j.file, j.skip
	}
	if skip != SkipNone {
		w.st.count(skip, 1)
		if w.opts.OnSkip != nil {
			p := f.Path
			if ev.job == nil {
				p = ev.path
			}
			if ev.isDir {
				p += "/"
			}
			w.opts.OnSkip(p, skip)
		}
		return nil
	}
	w.st.Files++
	w.st.Bytes += f.size
	return w.fn(f)
}

func (w *walker) init() error {
	if w.opts.MaxFileBytes <= 0 {
		w.opts.MaxFileBytes = chunker.DefaultMaxFileBytes
	}
	w.exclude = nil
	for _, e := range w.opts.Exclude {
		t := strings.TrimSpace(e)
		if t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "!") {
			return &repoctx.OptionError{Option: "exclude", Value: strconv.Quote(e),
				Want: `a gitignore pattern that excludes (not blank, not a "#" comment, no leading "!")`}
		}
		w.exclude = append(w.exclude, newIgnorePattern(t, nil))
	}
	if len(w.opts.Languages) > 0 {
		w.langs = map[string]bool{}
		for _, l := range w.opts.Languages {
			if grammars.Lookup(l) == nil {
				return &repoctx.OptionError{Option: "langs", Value: strconv.Quote(l),
					Want: "a registered language (" + strings.Join(grammars.Names(), ", ") + ")"}
			}
			w.langs[l] = true
		}
	}
	w.st.Skipped = map[SkipReason]int{}
	return nil
}

// skip reports p as skipped for r, after the events pending before it (see emit: it
// waits for reads while readAhead or more events are pending, so the skips found while
// a read is slow do not pile up), and returns fn's error or ctx's (from delivering the
// files before it).
func (w *walker) skip(p string, isDir bool, r SkipReason) error {
	return w.emit(walkEvent{path: p, isDir: isDir, skip: r})
}

// vcsDirs are version-control metadata names, skipped as files or folders.
var vcsDirs = map[string]bool{".git": true, ".hg": true, ".svn": true}

// dir walks the folder p (slash path, "." for the root) whose path components are
// elems; ps are the ignore patterns in force above it, lowest priority first.
func (w *walker) dir(p string, elems []string, ps []ignorePattern) error {
	entries, err := fs.ReadDir(w.fsys, p)
	if err != nil {
		if p == "." {
			return fmt.Errorf("snapshot: read the root folder: %w", err)
		}
		return w.skip(p, true, SkipUnreadable)
	}
	if p != "." && !w.opts.KeepVendored && venvEntries(w.fsys, p, entries) {
		// VendoredDir's test on the entries read anyway (a Stat of a missing
		// pyvenv.cfg in every folder cost a fifth of an unchanged repository's walk).
		return w.skip(p, true, SkipVendored)
	}
	if !w.opts.NoIgnoreFiles {
		for _, name := range []string{".gitignore", ".ignore"} {
			if !hasEntry(entries, name) {
				continue
			}
			if data, err := fs.ReadFile(w.fsys, join(p, name)); err == nil {
				ps = append(ps[:len(ps):len(ps)], parsePatterns(data, elems)...)
			}
		}
	}
	ignore := newDirMatcher(ps, elems)
	exclude := newDirMatcher(w.exclude, elems)
	// Visit in full-path order: a folder "a" sorts as "a/", after "a.txt".
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(sortKey(a), sortKey(b)) })
	// An entry's components: elems and its name, in one array for the folder's entries
	// (a copy per entry was a tenth of a 50,000-file walk's CPU); a folder's
	// walk gets a copy of its own, which its patterns may keep.
	ce := append(make([]string, 0, len(elems)+1), elems...)
	ce = append(ce, "")
	for _, e := range entries {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		name := e.Name()
		cp := join(p, name)
		ce[len(elems)] = name
		isDir := e.IsDir()
		switch {
		case vcsDirs[name]:
			if err := w.skip(cp, isDir, SkipVCS); err != nil {
				return err
			}
			continue
		case exclude.Match(ce, isDir):
			if err := w.skip(cp, isDir, SkipExcluded); err != nil {
				return err
			}
			continue
		case !w.opts.NoIgnoreFiles && ignore.Match(ce, isDir):
			if err := w.skip(cp, isDir, SkipIgnored); err != nil {
				return err
			}
			continue
		}
		if isDir {
			if !w.opts.KeepVendored && vendoredNames[name] && !jvmPackage(w.fsys, cp) {
				if err := w.skip(cp, true, SkipVendored); err != nil {
					return err
				}
				continue
			}
			if err := w.dir(cp, slices.Clone(ce), ps); err != nil {
				return err
			}
			continue
		}
		if err := w.file(cp, e); err != nil {
			return err
		}
	}
	return nil
}

func sortKey(e fs.DirEntry) string {
	if e.IsDir() {
		return e.Name() + "/"
	}
	return e.Name()
}

func hasEntry(entries []fs.DirEntry, name string) bool {
	for _, e := range entries {
		if e.Name() == name && !e.IsDir() {
			return true
		}
	}
	return false
}

func join(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

// file checks one non-folder entry and yields it.
func (w *walker) file(p string, e fs.DirEntry) error {
	t := e.Type()
	var size int64
	var info fs.FileInfo
	lang := ""
	if s := grammars.ForPath(p); s != nil {
		lang = s.Name
	}
	notChosen := lang == "" && !w.opts.OtherFiles || lang != "" && w.langs != nil && !w.langs[lang]
	switch {
	case t&fs.ModeSymlink != 0:
		fi, err := fs.Stat(w.fsys, p) // follows the link; os.Root refuses to leave the root
		info = fi
		if err != nil || !fi.Mode().IsRegular() {
			if err == nil && !fi.IsDir() {
				return w.skip(p, false, SkipNotRegular)
			}
			return w.skip(p, false, SkipSymlink)
		}
		size = fi.Size()
	case t.IsRegular() && notChosen:
		// Not stat'ed: its name says it is left out (a listing that stats lazily,
		// RootFS's, then costs nothing more for it).
	case t.IsRegular():
		fi, err := e.Info()
		if err != nil {
			return w.skip(p, false, SkipUnreadable)
		}
		size, info = fi.Size(), fi
	default:
		return w.skip(p, false, SkipNotRegular)
	}
	if notChosen {
		return w.skip(p, false, SkipLanguage)
	}
	if size > w.opts.MaxFileBytes {
		return w.skip(p, false, SkipTooLarge)
	}
	if !w.opts.KeepGenerated && minifiedName(p) {
		return w.skip(p, false, SkipMinified)
	}
	if w.opts.Known != nil && info != nil {
		// Unchanged since a walk that accepted it (same size, times and inode): its
		// content's verdicts and hash still hold, so it is not read.
		if sum, ok := w.opts.Known(p, info); ok {
			return w.emit(walkEvent{file: File{Path: p, Lang: lang, info: info, known: true, sum: sum, size: size}})
		}
	}
	return w.emit(walkEvent{job: &readJob{file: File{Path: p, Lang: lang, info: info}}})
}

var errTooLarge = errors.New("grew over the size limit")

// readLimited reads at most max+1 bytes of p and fails with errTooLarge past max (the
// file may have grown since it was listed).
func readLimited(fsys fs.FS, p string, max int64) ([]byte, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	if fi, err := f.Stat(); err == nil && fi.Size() <= max {
		buf.Grow(int(fi.Size()) + bytes.MinRead)
	}
	n, err := buf.ReadFrom(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if n > max {
		return nil, errTooLarge
	}
	return buf.Bytes(), nil
}

// parsePatterns parses the lines of an ignore file in folder domain (path
// components below the root): blank lines and "#" comments are left out, a trailing
// CR is dropped (CRLF files), the rest goes to gitignore.ParsePattern, which handles
// "!", "/", "**" and trailing spaces ("\ " keeps one).
func parsePatterns(data []byte, domain []string) []ignorePattern {
	var ps []ignorePattern
	for line := range strings.SplitSeq(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ps = append(ps, newIgnorePattern(line, domain))
	}
	return ps
}

// vendoredNames are folder names whose contents are third-party code: Go's and PHP's
// vendor/, pip's _vendor/, npm's node_modules/, Bower's bower_components/, and a
// Python installation's site-packages/.
var vendoredNames = map[string]bool{
	"vendor": true, "_vendor": true, "node_modules": true, "bower_components": true, "site-packages": true,
}

// jvmSourceExts are the extensions of the source files that make a folder named
// vendor a package of the project's own code (see jvmPackage).
var jvmSourceExts = map[string]bool{".java": true, ".kt": true, ".scala": true, ".groovy": true}

// jvmPackage reports whether the folder p is named vendor and directly holds Java,
// Kotlin, Scala or Groovy source files: a package of that name (Spring's
// org/springframework/orm/jpa/vendor), not vendored code. Go, PHP, Ruby and npm
// vendor folders hold modules in subfolders, and vendored Python code is Python.
func jvmPackage(fsys fs.FS, p string) bool {
	if path.Base(p) != "vendor" {
		return false
	}
	entries, err := fs.ReadDir(fsys, p)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if !e.IsDir() && jvmSourceExts[path.Ext(e.Name())] {
			return true
		}
	}
	return false
}

// VendoredDir reports whether the folder p (slash path in fsys) holds vendored code:
// its name is vendor (unless it is a Java, Kotlin, Scala or Groovy package of that
// name: it directly holds such source files), _vendor, node_modules,
// bower_components or site-packages, or it is a Python virtual environment (it holds
// a pyvenv.cfg file, PEP 405), whatever its name (.venv, venv, env, ...).
func VendoredDir(fsys fs.FS, p string) bool {
	if vendoredNames[path.Base(p)] {
		return !jvmPackage(fsys, p)
	}
	fi, err := fs.Stat(fsys, join(p, "pyvenv.cfg"))
	return err == nil && fi.Mode().IsRegular()
}

// venvEntries reports whether the folder p, whose entries are entries, holds a
// pyvenv.cfg regular file (a symlink is followed), as [VendoredDir] tests it.
func venvEntries(fsys fs.FS, p string, entries []fs.DirEntry) bool {
	for _, e := range entries {
		if e.Name() != "pyvenv.cfg" {
			continue
		}
		if e.Type().IsRegular() {
			return true
		}
		if e.Type()&fs.ModeSymlink != 0 {
			fi, err := fs.Stat(fsys, join(p, "pyvenv.cfg"))
			return err == nil && fi.Mode().IsRegular()
		}
		return false
	}
	return false
}

// binaryProbe is how many leading bytes IsBinary looks at: git's FIRST_FEW_BYTES
// (xdiff-interface.c, buffer_is_binary).
const binaryProbe = 8000

// IsBinary reports whether data looks binary: a NUL byte among its first 8000 bytes
// (git's rule), unless those bytes look like UTF-16 text: a UTF-16 byte-order mark,
// or NUL bytes only at odd offsets (little-endian text mostly in U+0000-U+00FF) or
// only at even offsets (big-endian).
func IsBinary(data []byte) bool {
	head := data[:min(len(data), binaryProbe)]
	if bytes.IndexByte(head, 0) < 0 {
		return false
	}
	if bytes.HasPrefix(head, []byte{0xFF, 0xFE}) || bytes.HasPrefix(head, []byte{0xFE, 0xFF}) {
		return false
	}
	even, odd := 0, 0
	for i, b := range head {
		if b == 0 {
			if i%2 == 0 {
				even++
			} else {
				odd++
			}
		}
	}
	// UTF-16 text has NULs at one parity only and an even length.
	return even > 0 && odd > 0 || len(data)%2 == 1
}

// generatedProbeLines is how many leading lines IsGenerated reads.
const generatedProbeLines = 10

// generatedMarkers match the comments code generators write near the top of a file:
// Go's convention (https://go.dev/s/generatedcode), Meta's "@generated" tag (also
// used by Phabricator and Buck), and the "this file is generated", "autogenerated
// by" and "generated by ... do not edit" wording of protoc, Thrift, SWIG, Django
// migrations and many others.
var generatedMarkers = []*regexp.Regexp{
	regexp.MustCompile(`Code generated .*DO NOT EDIT`),
	regexp.MustCompile(`@generated\b`),
	regexp.MustCompile(`(?i)\b(file|module|code|class|source) is (auto-?generated|automatically generated|generated)\b`),
	regexp.MustCompile(`(?i)\b(auto-?generated|automatically generated) (by|from|with|using)\b`),
	regexp.MustCompile(`(?i)\bgenerated\b.*\bdo not (edit|modify)\b`),
	regexp.MustCompile(`(?i)\bdo not (edit|modify)\b.*\bgenerated\b`),
	regexp.MustCompile(`^\s*#\s*Generated by Django \d`),
}

// commentStart matches a line that starts a comment or a docstring in the languages
// repoctx meets: // /* * # <!-- -- ; """ ”'.
var commentStart = regexp.MustCompile(`^\s*(//|/\*|\*|#|<!--|--|;|"""|''')`)

// IsGenerated reports whether a comment line (see commentStart) among the first 10
// lines of data says the file is generated: "Code generated ... DO NOT EDIT",
// "@generated", "this file is (auto-)generated" (also module, code, class, source),
// "autogenerated by/from/with/using" (also auto-generated, automatically generated),
// "generated ... do not edit" (either order) or "Generated by Django N" (a
// migration). Only comment lines count, so code that merely talks about generation
// is kept. Scaffolds meant to be edited are kept too: a bare "autogenerated" is not
// enough (Sphinx's conf.py calls itself "this autogenerated file") nor is the past
// tense ("This file was generated by the Gradle 'init' task").
func IsGenerated(data []byte) bool {
	rest := data[:min(len(data), 4096)]
	for i := 0; i < generatedProbeLines && len(rest) > 0; i++ {
		line := rest
		if j := bytes.IndexByte(rest, '\n'); j >= 0 {
			line, rest = rest[:j], rest[j+1:]
		} else {
			rest = nil
		}
		if !commentStart.Match(line) {
			continue
		}
		for _, m := range generatedMarkers {
			if m.Match(line) {
				return true
			}
		}
	}
	return false
}

// minifiable are the extensions IsMinified looks at.
var minifiable = map[string]bool{".js": true, ".mjs": true, ".cjs": true, ".css": true}

// minifiedLineBytes is the average line length in bytes over which IsMinified calls a
// file minified: GitHub Linguist's rule (lib/linguist/generated.rb, minified_files?).
const minifiedLineBytes = 110

// minifiedName reports whether p is named like a minified bundle (x.min.js, x.min.css).
func minifiedName(p string) bool {
	ext := path.Ext(p)
	return minifiable[ext] && strings.HasSuffix(strings.TrimSuffix(path.Base(p), ext), ".min")
}

// IsMinified reports whether the file p with content data is minified JavaScript or
// CSS (extension .js, .mjs, .cjs or .css): named *.min.js / *.min.css, or an average
// line length over 110 bytes (GitHub Linguist's rule).
func IsMinified(p string, data []byte) bool {
	if !minifiable[path.Ext(p)] {
		return false
	}
	if minifiedName(p) {
		return true
	}
	lines := bytes.Count(data, []byte{'\n'})
	if len(data) > 0 && data[len(data)-1] != '\n' {
		lines++
	}
	return lines > 0 && len(data)/lines > minifiedLineBytes
}

// FolderName returns the name the snapshot of the folder dir has (OpenFolder,
// OpenFolderCached, OpenDir): the base name of its absolute path, "" when that cannot
// be had.
func FolderName(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	return filepath.Base(abs)
}

// OpenFolder walks the repository folder dir with the walker's rules (opts: .gitignore,
// .ignore, .git/info/exclude, vendored, generated and binary files left out; the zero
// value applies them all) and opens the files it yields as a snapshot named after the
// folder, which knows each file's SHA-256 from the walk ([Hasher]): a view of it reads
// only the files whose chunks are not stored. It returns the walk's statistics with it,
// and the walker's errors (a bad option as a *repoctx.OptionError, ctx's error).
func OpenFolder(ctx context.Context, dir string, opts WalkOptions) (Snapshot, WalkStats, error) {
	return OpenFolderCached(ctx, dir, opts, nil)
}

// OpenFolderCached is [OpenFolder] that remembers, in recs (the store records of the
// folder's repository; nil keeps nothing), each accepted file's size, modification and
// change times, inode and SHA-256, so that a later walk of the same folder with the
// same options reads only the files that changed (an `index` after one saved edit
// reads one file, not every file): a file whose metadata all match is taken as
// unchanged, as git's index does, unless it was modified within two seconds before the
// state was recorded (a write in the same clock tick could leave the times as they
// were). The state is written with recs' next segment ([store.Records.Flush]).
func OpenFolderCached(ctx context.Context, dir string, opts WalkOptions, recs *store.Records) (Snapshot, WalkStats, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, WalkStats{}, fmt.Errorf("snapshot: open snapshot folder %s: %w", dir, err)
	}
	lim := Limits{MaxFileBytes: opts.MaxFileBytes}.withDefaults()
	s := &snapshot{name: filepath.Base(abs), lim: lim, dir: abs, files: map[string]fileEntry{}, sums: map[string][32]byte{}}
	var state *folderState
	if recs != nil {
		state = loadFolderState(recs, abs, opts)
		opts.Known = state.known
		// Sized as the last walk found it: growing three maps of 50,000 paths one
		// rehash after another was a tenth of an unchanged folder's walk.
		n := len(state.old)
		s.files, s.sums, state.cur = make(map[string]fileEntry, n), make(map[string][32]byte, n), make(map[string]fileStamp, n)
	}
	st, err := Walk(ctx, abs, opts, func(f File) error {
		// The walker read the file whole (or vouched for it): keep its size and hash,
		// not its bytes (a view reads only the files whose chunks are not stored, and
		// checks that they still hash the same).
		if len(s.files) >= lim.MaxFiles {
			if len(s.files) == lim.MaxFiles {
				s.skip(f.Path, fmt.Sprintf("over the limit of %d files: this and later files left out", lim.MaxFiles))
			}
			return nil
		}
		sum := f.sum
		if !f.known {
			sum = sha256.Sum256(f.Data)
		}
		s.files[f.Path] = fileEntry{size: f.size}
		s.sums[f.Path] = sum
		state.add(f.Path, f.info, sum)
		return nil
	})
	if err != nil {
		return nil, st, err
	}
	state.save()
	s.finish()
	return s, st, nil
}
