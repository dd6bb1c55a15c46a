package complete

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// FuzzCopyLinesMatchesNaive: CopyLines equals its definition (naiveCopyLines) on any
// prefix and context, called twice per input so that the second call reuses scratch
// memory.
func FuzzCopyLinesMatchesNaive(f *testing.F) {
	f.Add("a b\nc\n", "x\na b\nc\nd\ne\n<|file_sep|>p\na\nb\nc\nd", 2)
	f.Add("a\r\nb\r\n", "a\r\nb\r\n\r\nc\r\nd\r\n<|file_sep|><|file_sep|>\n", 1)
	f.Fuzz(func(t *testing.T, prefix, context string, n int) {
		n = n%5 + 1
		if n < 1 {
			n += 5
		}
		for range 2 {
			got, want := CopyLines(prefix, context, n), naiveCopyLines(prefix, context, n)
			if len(got) == 0 && len(want) == 0 {
				continue
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("CopyLines(%q, %q, %d) = %q, naive %q", prefix, context, n, got, want)
			}
		}
	})
}

// TestCopyLinesManyTokensConcurrent: contexts of many distinct tokens (the token table
// grows), of different sizes, from several goroutines sharing the scratch pool.
func TestCopyLinesManyTokensConcurrent(t *testing.T) {
	ctx := func(seed, lines, per int) string {
		var sb strings.Builder
		for l := range lines {
			for w := range per {
				fmt.Fprintf(&sb, "t%d_%d ", (seed*7+l*per+w)%(lines*per/2+1), seed%3)
			}
			if l%5 == 4 {
				sb.WriteString("\n\n<|file_sep|>path\n")
			}
			sb.WriteString("\n")
		}
		return sb.String()
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 30 {
				size := []int{3, 400, 20, 1500, 7}[(i+g)%5]
				c := ctx(i+g, size, 9)
				prefix := fmt.Sprintf("t%d_%d t%d_%d\nx t%d_%d", i, (i+g)%3, 3*i, (i+g)%3, 5*i+1, (i+g)%3)
				for _, n := range []int{1, 3} {
					got, want := CopyLines(prefix, c, n), naiveCopyLines(prefix, c, n)
					if !(len(got) == 0 && len(want) == 0) && !reflect.DeepEqual(got, want) {
						t.Errorf("goroutine %d call %d n %d: got %q, naive %q", g, i, n, got, want)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}
