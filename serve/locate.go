package serve

import (
	"bytes"
	"maps"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// Finding the completion file of a request that does not name it (llama.vim and
// llama.vscode send only the text around the cursor): the file of the served
// workspaces that holds the most of the lines near the cursor.
//
// The lines are the complete lines of the last locateLines lines of the prefix and the
// first locateLines of the suffix (the line under the cursor is being typed and is
// left out), trimmed, of at least minLineChars characters with a letter, each cut
// to its first maxPatternBytes bytes (bytes.Index is fastest for patterns that
// short). A first pass looks for the longest lines (the most distinctive) in every
// file, one line at a time, passing over lines that many files hold; the files
// holding the first few telling lines are then scored on every line; the file
// holding the most wins, ties going to the path first in byte order. A file with
// near-identical siblings is told from them by the lines they do not share.
const (
	locateLines     = 40
	minLineChars    = 8
	maxPatternBytes = 63
	firstPass       = 3
	maxCandidates   = 50
	maxScans        = 10
)

// fileMatch is the file a request's text was found in.
type fileMatch struct {
	ws    *Workspace
	path  string
	lines int // lines of the request found in the file
}

// files returns the workspace's current files (read-only: the map is replaced, never
// modified, once published).
func (w *Workspace) fileSet() map[string]*memFile {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.files
}

// locate returns the file of the workspaces that holds the most lines near the
// cursor; ok is false when none holds at least two of them (or the one, when the
// text has a single line to look for).
func locate(wss []*Workspace, prefix, suffix string) (fileMatch, bool) {
	pats := patterns(prefix, suffix)
	if len(pats) == 0 {
		return fileMatch{}, false
	}
	type cand struct {
		ws   *Workspace
		path string
		data []byte
	}
	var all []cand
	for _, w := range wss {
		fs := w.fileSet()
		for _, p := range slices.Sorted(maps.Keys(fs)) {
			if data, err := fs[p].Bytes(); err == nil { // one that changed is left to the update
				all = append(all, cand{ws: w, path: p, data: data})
			}
		}
	}
	// First pass: the longest lines, one at a time in every file; a line found in more
	// than maxCandidates files (a license header, an import) tells nothing and is
	// passed over. The files holding the first firstPass telling lines (looking at
	// most maxScans lines) are the candidates.
	byLen := slices.Clone(pats)
	sort.SliceStable(byLen, func(i, j int) bool { return len(byLen[i]) > len(byLen[j]) })
	hits := make([]int, len(all))
	telling := 0
	for k := 0; k < len(byLen) && k < maxScans && telling < firstPass; k++ {
		var in []int
		for i := range all {
			if bytes.Contains(all[i].data, byLen[k]) {
				in = append(in, i)
			}
		}
		if len(in) == 0 || len(in) > maxCandidates {
			continue
		}
		telling++
		for _, i := range in {
			hits[i]++
		}
	}
	var found []cand
	for i := range all {
		if hits[i] > 0 {
			found = append(found, all[i])
		}
	}
	if len(found) == 0 {
		return fileMatch{}, false
	}
	// Second pass: every line, in the candidates.
	best := -1
	bestHits := 0
	for i := range found {
		n := 0
		for _, pat := range pats {
			if bytes.Contains(found[i].data, pat) {
				n++
			}
		}
		if n > bestHits || n == bestHits && best >= 0 && found[i].path < found[best].path {
			best, bestHits = i, n
		}
	}
	if best < 0 || bestHits < min(2, len(pats)) {
		return fileMatch{}, false
	}
	return fileMatch{ws: found[best].ws, path: found[best].path, lines: bestHits}, true
}

// patterns returns the distinct lines to look for (see the comment above), nearest
// the cursor first.
func patterns(prefix, suffix string) [][]byte {
	var lines []string
	if i := strings.LastIndexByte(prefix, '\n'); i >= 0 {
		before := strings.Split(prefix[:i], "\n")
		for k := len(before) - 1; k >= 0 && k >= len(before)-locateLines; k-- {
			lines = append(lines, before[k])
		}
	}
	if i := strings.IndexByte(suffix, '\n'); i >= 0 {
		after := strings.Split(suffix[i+1:], "\n")
		for k := 0; k < len(after) && k < locateLines; k++ {
			lines = append(lines, after[k])
		}
	}
	seen := map[string]bool{}
	var out [][]byte
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if len(l) > maxPatternBytes {
			l = l[:maxPatternBytes]
		}
		if len(l) < minLineChars || seen[l] || !strings.ContainsFunc(l, unicode.IsLetter) {
			continue
		}
		seen[l] = true
		out = append(out, []byte(l))
	}
	return out
}
