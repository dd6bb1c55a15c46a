package store

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/repoctx/repoctx/internal/atomicfile"
)

// RepoUsage describes one repository's records in a cache directory.
type RepoUsage struct {
	// ID is the repository's name (the name given to Store.Records).
	ID string
	// Bytes is the size of its segment files, of its stored views (Records.PutView)
	// and of its search indexes (the folder IndexDirName, package crossrepo);
	// Segments is the number of segment files and IndexBytes the search indexes'
	// share of Bytes.
	Bytes      int64
	Segments   int
	IndexBytes int64
	// Damaged counts the segments whose footer does not check (truncated or
	// overwritten by another program): they are never read, their records are
	// computed again, and GC removes them when it merges the repository's segments.
	// Only Stat reads the footers to count them (GC, which every command runs when
	// it ends, does not).
	Damaged int
	// LastUsed is when a process last opened it.
	LastUsed time.Time
	// InUse reports whether a process (this one included) has it open now.
	InUse bool
}

// CacheStats describes a cache directory.
type CacheStats struct {
	// Dir is the cache directory.
	Dir string
	// Bytes is the size of the store (segment files, stored views and search
	// indexes); Repos its
	// repositories, least recently used first.
	Bytes int64
	Repos []RepoUsage
	// OldBytes is the size of caches of older formats still there (CleanOldFormats
	// removes them); Temps the temporary files left by killed runs.
	OldBytes int64
	Temps    int
}

// Stat describes the cache directory cacheDir without changing it, reading every
// segment's footer to count the damaged ones (RepoUsage.Damaged).
func Stat(cacheDir string) (CacheStats, error) { return stat(cacheDir, true) }

// stat is Stat; checkSegments reads the segments' footers (RepoUsage.Damaged).
func stat(cacheDir string, checkSegments bool) (CacheStats, error) {
	cs := CacheStats{Dir: cacheDir}
	if _, err := os.Stat(cacheDir); err != nil {
		return cs, fmt.Errorf("store: cache directory %s: %w", cacheDir, err)
	}
	root := filepath.Join(cacheDir, DirName, "repos")
	ents, _ := os.ReadDir(root)
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		u, temps := repoUsage(filepath.Join(root, e.Name()), checkSegments)
		cs.Temps += temps
		cs.Bytes += u.Bytes
		cs.Repos = append(cs.Repos, u)
	}
	slices.SortFunc(cs.Repos, func(a, b RepoUsage) int { return a.LastUsed.Compare(b.LastUsed) })
	cs.OldBytes = oldFormatBytes(cacheDir)
	return cs, nil
}

// repoUsage describes the repository folder dir and counts its temporary files;
// checkSegments reads each segment's footer to count the damaged ones.
func repoUsage(dir string, checkSegments bool) (RepoUsage, int) {
	var u RepoUsage
	id, _ := os.ReadFile(filepath.Join(dir, "repo"))
	u.ID = strings.TrimSpace(string(id))
	if fi, err := os.Stat(filepath.Join(dir, "used")); err == nil {
		u.LastUsed = fi.ModTime()
	}
	temps := 0
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		switch {
		case atomicfile.IsTemp(e.Name()):
			temps++
		case strings.HasSuffix(e.Name(), viewExt) && e.Type().IsRegular():
			if fi, err := e.Info(); err == nil {
				u.Bytes += fi.Size()
			}
		case strings.HasSuffix(e.Name(), segExt) && e.Type().IsRegular():
			if fi, err := e.Info(); err == nil {
				u.Bytes += fi.Size()
				u.Segments++
			}
			if !checkSegments {
				break
			}
			if seg, _, err := openSegment(filepath.Join(dir, e.Name())); err != nil {
				u.Damaged++
			} else {
				seg.f.Close()
			}
		}
	}
	u.IndexBytes = DirBytes(filepath.Join(dir, IndexDirName))
	u.Bytes += u.IndexBytes
	u.InUse = !tryLock(filepath.Join(dir, "lock"), func() {})
	return u, temps
}

// tryLock runs f while holding the exclusive lock of the lock file path, taken without
// waiting, and reports whether it could take it (a missing lock file counts as free).
func tryLock(path string, f func()) bool {
	fd, err := os.Open(path)
	if err != nil {
		if os.IsNotExist(err) {
			f()
			return true
		}
		return false
	}
	defer fd.Close()
	if flock(fd, syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return false
	}
	f()
	return true
}

// GCResult reports what [GC] did.
type GCResult struct {
	// Evicted lists the repositories removed, least recently used first.
	Evicted []string
	// Freed is the bytes removed (evicted repositories, old formats, leftovers).
	Freed int64
	// Kept lists the repositories over the cap that could not be evicted because a
	// process has them open.
	Kept []string
	// Compacted counts the repositories whose segments were merged into one.
	Compacted int
}

// GC brings the cache directory under maxBytes (<= 0: no cap): it removes caches of
// older formats and the temporary files of killed runs, merges the segments of
// repositories that have many, and then evicts whole repositories, least recently
// used first, until the store is at most maxBytes; a repository a process has open
// (this one included) is never evicted.
func GC(cacheDir string, maxBytes int64) (GCResult, error) {
	var res GCResult
	res.Freed += CleanOldFormats(cacheDir)
	root := filepath.Join(cacheDir, DirName, "repos")
	ents, _ := os.ReadDir(root)
	for _, e := range ents {
		if e.IsDir() {
			dir := filepath.Join(root, e.Name())
			removeDeadTemps(dir)
			if compactRepo(dir) {
				res.Compacted++
			}
		}
	}
	cs, err := stat(cacheDir, false) // sizes and use only: no footer reads at every command's end
	if err != nil {
		return res, err
	}
	total := cs.Bytes
	for _, u := range cs.Repos { // least recently used first
		if maxBytes <= 0 || total <= maxBytes {
			break
		}
		dir := filepath.Join(root, repoDirName(u.ID))
		evicted := tryLock(filepath.Join(dir, "lock"), func() {
			// Under the lock no process uses it: remove its segments, then the folder.
			os.RemoveAll(dir)
		})
		if !evicted {
			res.Kept = append(res.Kept, u.ID)
			continue
		}
		res.Evicted = append(res.Evicted, u.ID)
		res.Freed += u.Bytes
		total -= u.Bytes
	}
	return res, nil
}

// Clear removes every repository of the cache directory that no process has open
// (see GC), and caches of older formats. It returns what it removed.
func Clear(cacheDir string) (GCResult, error) {
	return GC(cacheDir, 1)
}

// repoDirName returns the folder name of repository id under store-v2/repos.
func repoDirName(id string) string { return filepath.Base((&Store{}).repoDir(id)) }

// compactLimit is the number of small segments (under AutoFlushBytes) above which a
// repository's segments are merged.
const compactLimit = 16

// compactRepo merges the segments of the repository folder dir into one when more
// than compactLimit of them are small (under autoFlushBytes: segments written at the
// end of a view, not the ones a big run wrote as its records accumulated, which would
// otherwise have a first index of a big repository merged at once), unless another
// process is compacting it. Readers that have the old segments open keep reading them
// (open files outlive their names); new readers see the merged one. It reports whether
// it compacted.
func compactRepo(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	var names []string
	small := 0
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), segExt) && !strings.HasPrefix(e.Name(), ".") && e.Type().IsRegular() {
			names = append(names, e.Name())
			if fi, err := e.Info(); err == nil && fi.Size() < autoFlushBytes {
				small++
			}
		}
	}
	if small <= compactLimit {
		return false
	}
	lockPath := filepath.Join(dir, "compact.lock")
	f, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDONLY, 0o644)
	if err != nil {
		return false
	}
	defer f.Close()
	if flock(f, syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return false
	}
	// Where each record's payloads are, newest segment first (names sort by creation
	// time), so that a record written again under its key (a folder's state) keeps its
	// latest intact payload, as readers see it. Payloads are copied one at a time, so
	// merging a big repository does not hold its records in memory.
	srcs := map[Key][]recLoc{}
	var merged []string
	var opened []*segment
	defer func() {
		for _, seg := range opened {
			seg.f.Close()
		}
	}()
	for _, n := range slices.Backward(names) {
		seg, entries, err := openSegment(filepath.Join(dir, n))
		if err != nil {
			merged = append(merged, n) // damaged: dropped
			continue
		}
		opened = append(opened, seg)
		for _, e := range entries {
			e.loc.seg = seg
			srcs[e.key] = append(srcs[e.key], e.loc)
		}
		merged = append(merged, n)
	}
	keys := make([]Key, 0, len(srcs))
	for k := range srcs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b Key) int {
		if c := cmp.Compare(a.Kind, b.Kind); c != 0 {
			return c
		}
		return strings.Compare(string(a.Hash[:]), string(b.Hash[:]))
	})
	var buf []byte
	payload := func(k Key) ([]byte, bool) {
		for _, loc := range srcs[k] {
			if loc.len < 4 {
				continue
			}
			buf = slices.Grow(buf[:0], int(loc.len))[:loc.len]
			if _, err := loc.seg.f.ReadAt(buf, loc.off); err == nil && crc32Of(buf[4:]) == le32(buf) {
				return buf[4:], true
			}
		}
		return nil, false // no intact payload: dropped
	}
	name := fmt.Sprintf("seg-%d-%d-merged%s", time.Now().UnixNano(), os.Getpid(), segExt)
	written, err := writeSegment(filepath.Join(dir, name), keys, payload, map[Key]recLoc{})
	if err != nil {
		return false
	}
	written.Close()
	for _, n := range merged {
		os.Remove(filepath.Join(dir, n))
	}
	return true
}

// oldFormatBytes returns the size of what CleanOldFormats would remove.
func oldFormatBytes(cacheDir string) int64 {
	var n int64
	ents, _ := os.ReadDir(cacheDir)
	for _, e := range ents {
		if isOldFormat(cacheDir, e) {
			n += DirBytes(filepath.Join(cacheDir, e.Name()))
		}
	}
	return n
}
