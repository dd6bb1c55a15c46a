package grammars

import (
	"errors"
	"strings"
	"testing"
	"time"

	sitter "github.com/smacker/go-tree-sitter"
)

// TestCPULimit: a parse over the CPU time limit (a nanosecond: every parse is) fails
// with ErrCPULimit, every time, and the same Parsers parses again once the limit is
// raised (the parser that may hold tree-sitter's cancellation flag was replaced).
// Ranged parses too.
func TestCPULimit(t *testing.T) {
	spec := Lookup("python")
	text := []byte(strings.Repeat("def f(a):\n    return a + 1\n", 200))
	ps := NewParsers(time.Nanosecond)
	defer ps.Close()
	for i := range 3 {
		if tree, _, err := ps.Parse(spec, text); !errors.Is(err, ErrCPULimit) {
			if tree != nil {
				tree.Close()
			}
			t.Fatalf("parse %d under 1ns: %v, want ErrCPULimit", i, err)
		}
	}
	ranges := rangesOf(text, 0, len(text)/2)
	if _, err := ps.ParseRanges(spec, text, ranges); !errors.Is(err, ErrCPULimit) {
		t.Fatalf("ranged parse under 1ns: %v, want ErrCPULimit", err)
	}
	ps.limit = DefaultParseCPULimit
	for i := range 3 {
		tree, _, err := ps.Parse(spec, text)
		if err != nil {
			t.Fatalf("parse %d under the default limit: %v", i, err)
		}
		if tree.RootNode().HasError() {
			t.Errorf("parse %d: errors in valid Python", i)
		}
		tree.Close()
	}
	tree, err := ps.ParseRanges(spec, text, ranges)
	if err != nil {
		t.Fatalf("ranged parse under the default limit: %v", err)
	}
	tree.Close()
}

// TestCPULimitConcurrent: parses on many goroutines at once, each with its own
// Parsers under the default limit, all succeed (the watchdogs stop with their parses
// and never cancel a finished one).
func TestCPULimitConcurrent(t *testing.T) {
	spec := Lookup("go")
	text := []byte(strings.Repeat("func f(a int) int { return a + 1 }\n", 100))
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			ps := NewParsers(0)
			defer ps.Close()
			for range 50 {
				tree, _, err := ps.Parse(spec, text)
				if err != nil {
					errs <- err
					return
				}
				tree.Close()
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// rangesOf returns the one range of text's bytes [lo, hi), its points counted.
func rangesOf(text []byte, lo, hi int) []sitter.Range {
	point := func(x int) sitter.Point {
		row, col := 0, 0
		for _, c := range text[:x] {
			if c == '\n' {
				row, col = row+1, 0
			} else {
				col++
			}
		}
		return sitter.Point{Row: uint32(row), Column: uint32(col)}
	}
	return []sitter.Range{{StartByte: uint32(lo), EndByte: uint32(hi), StartPoint: point(lo), EndPoint: point(hi)}}
}
