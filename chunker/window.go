package chunker

import "unicode/utf8"

// span is a byte range [start, end) of the text with its 0-based first and last line.
type span struct {
	start, end          int
	firstLine, lastLine int
}

// windows cuts lines [lo, hi) into windows of at most maxLines lines and at most
// maxChars non-white-space runes, each starting overlap lines before the previous
// one ended. A line longer than maxChars on its own is cut into rune windows
// (splitLine). Trailing blank lines join the last window, so no window is blank
// unless the whole range is.
func windows(li *lineIndex, lo, hi, maxLines, overlap, maxChars int) []span {
	var out []span
	if maxLines < 1 {
		maxLines = 1
	}
	if overlap >= maxLines {
		overlap = maxLines - 1
	}
	if overlap < 0 {
		overlap = 0
	}
	i := lo
	for i < hi {
		var k int
		var ok bool
		if out, k, ok = windowLead(li, out, i, hi, maxChars); !ok {
			if k == hi {
				break
			}
			i = k + 1
			continue
		}
		j := k + 1
		for j < hi && j-i < maxLines && li.size(i, j+1) <= maxChars {
			j++
		}
		if j < hi && li.blankRange(j, hi) {
			j = hi
		}
		out = append(out, span{li.starts[i], li.starts[j], i, j - 1})
		if j >= hi {
			break
		}
		next := j - overlap
		if next <= i || li.size(j, j+1) > maxChars || li.size(next, j+1) > maxChars {
			next = j // no overlap into or before an oversized line
		}
		i = next
	}
	return out
}

// windowLead starts a window at line i of lines [i, hi): k is its first non-blank
// line (leading blank lines ride along with it). When the window needs no cutting
// of its own, windowLead appends to out and returns ok false: if [i, hi) is blank
// (k == hi), the blank lines join out's last window (or make one when out is
// empty); if line k alone is over maxChars non-white-space runes, it appends the
// line's rune windows (splitLine), the first widened back to line i. Otherwise ok
// is true and out is unchanged. Shared by [windows] and [alignedWindows].
func windowLead(li *lineIndex, out []span, i, hi, maxChars int) (_ []span, k int, ok bool) {
	k = i
	for k < hi && li.blank[k] {
		k++
	}
	if k == hi { // only blank lines left
		if len(out) > 0 {
			out[len(out)-1].end, out[len(out)-1].lastLine = li.starts[hi], hi-1
		} else {
			out = append(out, span{li.starts[i], li.starts[hi], i, hi - 1})
		}
		return out, k, false
	}
	if li.size(k, k+1) > maxChars {
		parts := splitLine(li, k, maxChars)
		parts[0].start, parts[0].firstLine = li.starts[i], i
		return append(out, parts...), k, false
	}
	return out, k, true
}

// splitLine cuts line i into pieces of at most maxChars non-white-space runes, on rune
// boundaries, preferring to cut after white space near the limit. The pieces tile the
// line exactly (no overlap).
func splitLine(li *lineIndex, i, maxChars int) []span {
	var out []span
	s, e := li.starts[i], li.starts[i+1]
	b := li.text
	tail := e // bytes [tail, e) are white space
	for tail > s {
		r, sz := utf8.DecodeLastRune(b[s:tail])
		if !isSpace(r) {
			break
		}
		tail -= sz
	}
	for s < e {
		n, p, lastSpace := 0, s, -1
		for p < e {
			r, sz := rune(b[p]), 1
			if r >= utf8.RuneSelf {
				r, sz = utf8.DecodeRune(b[p:e])
			}
			if !isSpace(r) {
				if n == maxChars {
					break
				}
				n++
			} else if n >= maxChars*4/5 {
				lastSpace = p + sz
			}
			p += sz
		}
		if p < e && lastSpace > s {
			p = lastSpace
		}
		if p >= tail {
			p = e
		}
		out = append(out, span{s, p, i, i})
		s = p
	}
	return out
}
