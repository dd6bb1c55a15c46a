package dataset

import (
	"fmt"
	"strings"
)

// optionDiff names the options that differ between two configuration texts written
// by [Fingerprint] (Go's %+v of the option structs plus key=value words): "compose.
// TopK 3 (journal) vs 8 (this run), ...", at most 8 of them. It returns "" when it
// finds no difference field by field (the texts are then shown whole by the caller).
func optionDiff(journal, now string) string {
	a, b := fingerprintLeaves(journal), fingerprintLeaves(now)
	var diffs []string
	seen := map[string]bool{}
	add := func(key, x, y string) {
		if len(diffs) < 8 {
			diffs = append(diffs, fmt.Sprintf("%s %s (journal) vs %s (this run)", key, x, y))
		} else if len(diffs) == 8 {
			diffs = append(diffs, "...")
		}
	}
	for _, l := range a {
		seen[l.key] = true
		y, ok := lookup(b, l.key)
		switch {
		case !ok:
			add(l.key, l.value, "absent")
		case y != l.value:
			add(l.key, l.value, y)
		}
	}
	for _, l := range b {
		if !seen[l.key] {
			add(l.key, "absent", l.value)
		}
	}
	return strings.Join(diffs, ", ")
}

type leaf struct{ key, value string }

func lookup(ls []leaf, key string) (string, bool) {
	for _, l := range ls {
		if l.key == key {
			return l.value, true
		}
	}
	return "", false
}

// fingerprintLeaves splits a Fingerprint text into its leaf options, each named by
// its path of struct fields ("index.Chunk.MaxChars", "compose.TopK",
// "model"). Values in brackets ([a b], map[k:v]) and quotes stay whole, and words
// without ':' or '=' after a value continue it (a Stringer's text, such as
// assemble.Plan's "window 8000 tokens, share 0.5, suffix share 0.25").
func fingerprintLeaves(s string) []leaf {
	var out []leaf
	var path []string
	i := 0
	for i < len(s) {
		switch c := s[i]; {
		case c == ' ' || c == ';':
			i++
			continue
		case c == '}':
			if len(path) > 0 {
				path = path[:len(path)-1]
			}
			i++
			continue
		}
		// A word: up to a space, '{' or '}' outside brackets and quotes.
		j, depth := i, 0
		for j < len(s) {
			c := s[j]
			if c == '"' {
				for j++; j < len(s) && s[j] != '"'; j++ {
					if s[j] == '\\' {
						j++
					}
				}
				j++
				continue
			}
			if c == '[' {
				depth++
			} else if c == ']' {
				depth--
			} else if depth <= 0 && (c == ' ' || c == '{' || c == '}') {
				break
			}
			j++
		}
		word := s[i:min(j, len(s))]
		i = j
		if i < len(s) && s[i] == '{' { // a struct: "Name:{" or "index {"
			path = append(path, strings.TrimSuffix(word, ":"))
			i++
			continue
		}
		if word == "" {
			continue
		}
		if i+1 < len(s) && s[i] == ' ' && s[i+1] == '{' && !strings.ContainsAny(word, ":=") {
			path = append(path, word) // "index {...}"
			i += 2
			continue
		}
		if !strings.ContainsAny(word, ":=") && len(out) > 0 && strings.HasPrefix(out[len(out)-1].key, strings.Join(path, ".")) {
			// A Stringer's value with spaces ("Plan:window 8000 tokens, share 0.5"):
			// the words up to the next key belong to the last value.
			out[len(out)-1].value += " " + word
			continue
		}
		k, v, ok := strings.Cut(word, ":")
		if eq := strings.IndexByte(word, '='); eq >= 0 && (!ok || eq < len(k)) {
			k, v, ok = word[:eq], word[eq+1:], true
		}
		if !ok {
			k, v = word, ""
		}
		out = append(out, leaf{strings.Join(append(append([]string(nil), path...), k), "."), v})
	}
	return out
}
