package chunker

import "testing"

// SplitChunkID reads back what ChunkID writes, and nothing else.
func TestSplitChunkID(t *testing.T) {
	for _, c := range []struct {
		path string
		n    int
	}{{"a.kt", 0}, {"src/f#0.kt", 12}, {"x", 999999999}} {
		p, n, ok := SplitChunkID(ChunkID(c.path, c.n))
		if !ok || p != c.path || n != c.n {
			t.Errorf("SplitChunkID(ChunkID(%q, %d)) = %q, %d, %v", c.path, c.n, p, n, ok)
		}
	}
	for _, id := range []string{"a.kt", "a.kt#", "a.kt#01", "a.kt#-1", "a.kt#+1", "a.kt#1x", "a.kt#1000000000"} {
		if _, _, ok := SplitChunkID(id); ok {
			t.Errorf("SplitChunkID(%q) ok", id)
		}
	}
}
