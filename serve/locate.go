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
// file, a few at a time until some file holds one; the files found, at most
// maxCandidates of them (the most lines first), are then scored on every line; the
// file holding the most wins, ties going to the path first in byte order. A file
// with near-identical siblings is told from them by the lines they do not share.
const (
	locateLines     = 40
	minLineChars    = 8
	maxPatternBytes = 63
	firstPass       = 3
	maxCandidates   = 50
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
		hits int
	}
	var all []cand
	for _, w := range wss {
		fs := w.fileSet()
		for _, p := range slices.Sorted(maps.Keys(fs)) {
			all = append(all, cand{ws: w, path: p, data: fs[p].data})
		}
	}
	// First pass: the longest lines, a few at a time, until a file holds one.
	byLen := slices.Clone(pats)
	sort.SliceStable(byLen, func(i, j int) bool { return len(byLen[i]) > len(byLen[j]) })
	var found []cand
	for from := 0; from < len(byLen) && len(found) == 0; from += firstPass {
		batch := byLen[from:min(from+firstPass, len(byLen))]
		for _, c := range all {
			for _, pat := range batch {
				if bytes.Contains(c.data, pat) {
					c.hits++
				}
			}
			if c.hits > 0 {
				found = append(found, c)
			}
		}
	}
	if len(found) == 0 {
		return fileMatch{}, false
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].hits > found[j].hits })
	found = found[:min(len(found), maxCandidates)]
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
