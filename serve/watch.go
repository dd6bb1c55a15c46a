package serve

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"context"

	"github.com/fsnotify/fsnotify"
)

// WatchMode says how a workspace finds its changes.
type WatchMode string

const (
	// WatchAuto watches every folder the walker goes into with fsnotify (inotify on
	// Linux), and polls instead when the system refuses more watches.
	WatchAuto WatchMode = "auto"
	// WatchPoll polls: every Config.PollInterval it stats the files and folders it
	// knows (a folder's modification time tells of entries added or removed).
	WatchPoll WatchMode = "poll"
)

// addWatch adds an fsnotify watch on the folder dir (a variable, so that tests can
// make the system refuse).
var addWatch = func(fw *fsnotify.Watcher, dir string) error { return fw.Add(dir) }

// track records the folders a walk of targets went into and the ignore files it read:
// folders at or below a target that the walk did not go into (deleted, renamed, newly
// ignored) are forgotten, and the new folders, to be watched, are returned (see
// watch).
func (w *Workspace) track(sc scan, targets []string) (add []string) {
	w.mu.Lock()
	var gone []string
	for d := range w.dirs {
		if _, ok := sc.dirs[d]; !ok && covered(d, targets) {
			delete(w.dirs, d)
			gone = append(gone, d)
		}
	}
	maps.Copy(w.dirs, sc.dirs)
	for p := range w.ignores {
		if _, ok := sc.ignores[p]; !ok && covered(p, targets) {
			delete(w.ignores, p)
		}
	}
	maps.Copy(w.ignores, sc.ignores)
	fw := w.fsw
	if fw != nil {
		for d := range sc.dirs {
			if !w.watched[d] {
				add = append(add, d)
			}
		}
		if !w.watched[".git/info"] {
			if fi, err := os.Stat(filepath.Join(w.root, ".git", "info")); err == nil && fi.IsDir() {
				add = append(add, ".git/info") // for .git/info/exclude
			}
		}
		for _, d := range gone {
			delete(w.watched, d)
		}
	}
	w.mu.Unlock()
	if fw == nil {
		return nil
	}
	for _, d := range gone {
		fw.Remove(filepath.Join(w.root, filepath.FromSlash(d))) // usually gone with the folder
	}
	return add
}

// watch adds a watch on each folder of add (slash paths); when the system refuses
// more, it falls back to polling.
func (w *Workspace) watch(add []string) {
	w.mu.Lock()
	fw := w.fsw
	w.mu.Unlock()
	if fw == nil {
		return
	}
	for _, d := range add {
		err := addWatch(fw, filepath.Join(w.root, filepath.FromSlash(d)))
		if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EMFILE) {
			w.fallback(err)
			return
		}
		if err == nil {
			w.mu.Lock()
			w.watched[d] = true
			w.mu.Unlock()
		}
		// Any other error: the folder went away since the walk; its parent's event
		// tells.
	}
}

// fallback stops watching and polls from now on.
func (w *Workspace) fallback(err error) {
	w.mu.Lock()
	fw := w.fsw
	w.fsw = nil
	clear(w.watched)
	w.mu.Unlock()
	if fw == nil {
		return
	}
	w.logf("the system refuses more file watches (%v; on Linux, raise fs.inotify.max_user_watches, e.g. sysctl fs.inotify.max_user_watches=524288): polling every %v instead", err, w.cfg.PollInterval)
	fw.Close()
}

// watchLoop turns fsnotify's events into noted paths; when there is no watcher (or
// once it is closed by a fallback) it polls.
func (w *Workspace) watchLoop(ctx context.Context) {
	w.mu.Lock()
	fw := w.fsw
	w.mu.Unlock()
	for fw != nil {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-fw.Events:
			if !ok {
				fw = nil
				break
			}
			w.event(ev)
		case err, ok := <-fw.Errors:
			if !ok {
				fw = nil
				break
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				w.logf("file events were lost (%v): reading the whole folder again", err)
				w.note(fullScan)
			} else {
				w.logf("watch error: %v", err)
			}
		}
	}
	if ctx.Err() != nil {
		return
	}
	t := time.NewTicker(w.cfg.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			w.poll()
		}
	}
}

// event notes the path of one fsnotify event.
func (w *Workspace) event(ev fsnotify.Event) {
	rel, err := filepath.Rel(w.root, ev.Name)
	if err != nil {
		return
	}
	rel = filepath.ToSlash(rel)
	switch {
	case rel == ".":
		w.note(fullScan) // the root itself: the walk says what is left
	case rel == ".." || strings.HasPrefix(rel, "../"):
	case rel == ".git" || strings.HasPrefix(rel, ".git/") && rel != ".git/info/exclude":
	default:
		w.note(rel)
	}
}

// poll notes the known files whose size or modification time changed, the ignore
// files that did, and the entries added to or removed from known folders whose
// modification time changed.
func (w *Workspace) poll() {
	w.mu.Lock()
	files := make(map[string]stat, len(w.files))
	for p, f := range w.files {
		files[p] = stat{f.size, f.mod}
	}
	dirs, ignores := maps.Clone(w.dirs), maps.Clone(w.ignores)
	w.mu.Unlock()
	var targets []string
	changed := func(p string, s stat) bool {
		fi, err := os.Stat(filepath.Join(w.root, filepath.FromSlash(p)))
		return err != nil || fi.Size() != s.size || !fi.ModTime().Equal(s.mod)
	}
	for p, s := range files {
		if changed(p, s) {
			targets = append(targets, p)
		}
	}
	for p, s := range ignores {
		if changed(p, s) {
			targets = append(targets, p)
		}
	}
	for d, mod := range dirs {
		fi, err := os.Stat(filepath.Join(w.root, filepath.FromSlash(d)))
		if err != nil {
			targets = append(targets, d)
			continue
		}
		if fi.ModTime().Equal(mod) {
			continue
		}
		now := time.Now()
		ts := w.dirChanges(d, files, dirs)
		if len(ts) == 0 { // nothing new in it (a temporary file came and went, or a racy time)
			w.mu.Lock()
			if _, ok := w.dirs[d]; ok {
				w.dirs[d] = stamp(fi.ModTime(), now)
			}
			w.mu.Unlock()
		}
		targets = append(targets, ts...)
	}
	w.note(targets...)
}

// dirChanges returns the entries of folder d that are new (not known as a file or
// folder) and the known ones that are gone.
func (w *Workspace) dirChanges(d string, files map[string]stat, dirs map[string]time.Time) []string {
	ents, err := fs.ReadDir(w.fsys, d)
	if err != nil {
		return []string{d}
	}
	join := func(name string) string {
		if d == "." {
			return name
		}
		return d + "/" + name
	}
	var out []string
	listed := map[string]bool{}
	for _, e := range ents {
		p := join(e.Name())
		listed[p] = true
		_, isFile := files[p]
		_, isDir := dirs[p]
		if !isFile && !isDir && e.Name() != ".git" {
			out = append(out, p)
		}
	}
	for p := range files {
		if path.Dir(p) == d && !listed[p] {
			out = append(out, p)
		}
	}
	for p := range dirs {
		if p != "." && path.Dir(p) == d && !listed[p] {
			out = append(out, p)
		}
	}
	return out
}
