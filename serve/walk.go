package serve

import (
	"context"
	"crypto/sha256"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/repoctx/repoctx/snapshot"
)

// scan is what one walk of some paths ("targets") of a workspace folder found.
type scan struct {
	// targets are the paths walked: those asked for, or "." for the whole folder.
	targets []string
	// files are the files the walker yields at or below a target.
	files map[string]*memFile
	// dirs are the folders the walker descended into (the ones to watch), with their
	// modification times taken before they were listed.
	dirs map[string]time.Time
	// ignores are the ignore files read on the way, with their stats (for polling).
	ignores map[string]stat
	// unreadable are the files the walker could not read (logged, then left out).
	unreadable []string
}

// fullScan is the target of a walk of the whole folder.
const fullScan = "."

// maxTargets is the number of changed paths above which one walk of the whole folder
// is cheaper than a walk per path (a branch switch, a formatter run).
const maxTargets = 256

// walkTargets runs the repository walker (snapshot.WalkFS, with every ignore rule of
// opts) on the workspace folder fsys restricted to targets: slash paths relative to root, files or folders,
// existing or not ("." is the whole folder). The walker sees each folder on the way
// to a target with the entries leading to the targets only (and its .gitignore and
// .ignore files), so a file is in exactly when a walk of the whole folder would yield
// it, and a target that no longer exists yields nothing. With state (a walk of the
// whole folder), a file the state vouches for is not read: its memFile holds its hash
// and a lazy read (read(path), checked against the hash when first needed); every
// file found is added to state (the caller saves it). It returns the walker's errors
// (a bad option, an unreadable root, ctx's error).
func walkTargets(ctx context.Context, fsys fs.FS, opts snapshot.WalkOptions, targets []string, state *snapshot.FolderState, read func(path string) func() ([]byte, error)) (scan, error) {
	if len(targets) > maxTargets || slices.Contains(targets, fullScan) {
		targets = []string{fullScan}
	}
	tf := &trackFS{fsys: fsys, targets: targets, dirs: map[string]time.Time{}, stats: map[string]stat{}}
	sc := scan{targets: targets, files: map[string]*memFile{}, dirs: tf.dirs, ignores: map[string]stat{}}
	prev := opts.OnSkip
	opts.OnSkip = func(p string, r snapshot.SkipReason) {
		if r == snapshot.SkipUnreadable && !strings.HasSuffix(p, "/") && covered(p, targets) {
			sc.unreadable = append(sc.unreadable, p)
		}
		if prev != nil {
			prev(p, r)
		}
	}
	if state != nil {
		opts.Known = state.Known
	}
	_, err := snapshot.WalkFS(ctx, tf, opts, func(f snapshot.File) error {
		if !covered(f.Path, targets) {
			return nil // an ignore file read on the way, with OtherFiles
		}
		var mf *memFile
		if fi := f.Info(); f.Vouched() && fi != nil {
			mf = &memFile{MemFile: snapshot.MemFile{Sum: f.Sum(), Lazy: &snapshot.Lazy{Size: fi.Size(), Read: read(f.Path)}},
				size: fi.Size(), mod: stamp(fi.ModTime(), time.Now())}
		} else {
			mf = &memFile{MemFile: snapshot.MemFile{Data: f.Data, Sum: sha256.Sum256(f.Data)}}
			if st, ok := tf.stat(f.Path); ok {
				mf.size, mf.mod = st.size, st.mod
			}
		}
		if state != nil {
			state.Add(f.Path, f.Info(), mf.Sum)
		}
		sc.files[f.Path] = mf
		return nil
	})
	for p, st := range tf.stats {
		if isIgnoreFile(p) {
			sc.ignores[p] = st
		}
	}
	return sc, err
}

// covered reports whether p is one of targets or below one.
func covered(p string, targets []string) bool {
	for _, t := range targets {
		if t == fullScan || p == t || strings.HasPrefix(p, t+"/") {
			return true
		}
	}
	return false
}

// onTheWay reports whether p is a target, below one, or a folder above one.
func onTheWay(p string, targets []string) bool {
	for _, t := range targets {
		if t == fullScan || p == t || strings.HasPrefix(p, t+"/") || strings.HasPrefix(t, p+"/") {
			return true
		}
	}
	return false
}

// trackFS is the workspace folder as the walker sees it during a walk of targets: its
// folders list only the entries on the way to a target (and the ignore files), and it
// records the folders listed and a stat of each file opened, taken before the file is
// read (their modification times as stamp records them). The walker opens files from
// several goroutines: mu guards stats.
type trackFS struct {
	fsys    fs.FS
	targets []string
	dirs    map[string]time.Time // written by ReadDir, on the walking goroutine

	mu    sync.Mutex
	stats map[string]stat
}

// Open implements fs.FS, recording a regular file's stat.
func (t *trackFS) Open(name string) (fs.File, error) {
	f, err := t.fsys.Open(name)
	if err == nil {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			st := stat{fi.Size(), stamp(fi.ModTime(), time.Now())}
			t.mu.Lock()
			t.stats[name] = st
			t.mu.Unlock()
		}
	}
	return f, err
}

// stat returns the stat Open recorded of the file name.
func (t *trackFS) stat(name string) (stat, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	st, ok := t.stats[name]
	return st, ok
}

// Stat implements fs.StatFS.
func (t *trackFS) Stat(name string) (fs.FileInfo, error) { return fs.Stat(t.fsys, name) }

// ReadDir implements fs.ReadDirFS: the entries of name on the way to a target.
func (t *trackFS) ReadDir(name string) ([]fs.DirEntry, error) {
	var mod time.Time
	if fi, err := fs.Stat(t.fsys, name); err == nil {
		mod = stamp(fi.ModTime(), time.Now())
	}
	ents, err := fs.ReadDir(t.fsys, name)
	if err != nil {
		return nil, err
	}
	t.dirs[name] = mod
	if len(t.targets) == 1 && t.targets[0] == fullScan {
		return ents, nil
	}
	keep := ents[:0]
	for _, e := range ents {
		p := e.Name()
		if name != "." {
			p = name + "/" + p
		}
		if onTheWay(p, t.targets) || (e.Name() == ".gitignore" || e.Name() == ".ignore") && !e.IsDir() {
			keep = append(keep, e)
		}
	}
	return keep, nil
}

// isIgnoreFile reports whether the slash path p is a file whose change can change
// which files the walker yields anywhere below its folder.
func isIgnoreFile(p string) bool {
	b := path.Base(p)
	return b == ".gitignore" || b == ".ignore" || p == ".git/info/exclude"
}
