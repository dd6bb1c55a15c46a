package grammars

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
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

// TestCancelFlag: cancelFlag finds the flag smacker registered with tree-sitter: set,
// it stops the parser's parse (no tree); cleared, the parser parses again.
func TestCancelFlag(t *testing.T) {
	p := sitter.NewParser()
	defer p.Close()
	p.SetLanguage(Lookup("python").Language())
	flag := cancelFlag(p)
	if flag == nil {
		t.Fatal("no cancellation flag found in smacker's Parser: the watchdog falls back to a goroutine per parse")
	}
	text := []byte(strings.Repeat("def f(a):\n    return a + 1\n", 200))
	atomic.StoreUintptr(flag, 1)
	if tree, err := p.ParseCtx(context.Background(), nil, text); tree != nil || err == nil {
		t.Fatalf("parse with the flag set: tree %v, error %v; want no tree", tree != nil, err)
	}
	atomic.StoreUintptr(flag, 0)
	p.Reset()
	tree, err := p.ParseCtx(context.Background(), nil, text)
	if err != nil || tree == nil {
		t.Fatalf("parse with the flag cleared: %v", err)
	}
	tree.Close()
}

// TestWatchdogStopsParse: the watchdog stops a parse that runs past the limit before
// it ends, through the parser's flag and through the context (the fallback): the
// stopped parse uses a fraction of the whole parse's CPU time (both measured on
// this thread's CPU clock, which other processes barely change).
func TestWatchdogStopsParse(t *testing.T) {
	if testing.Short() {
		t.Skip("parses a few MB")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	clock := threadClock()
	spec := Lookup("python")
	var sb strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&sb, "def f%d(a, b=[1, 2, {3: (4, 5)}]):\n    return [x * a for x in b if x > %d] or f%d(a - 1)\n", i, i, i)
	}
	text := []byte(sb.String())
	p := sitter.NewParser()
	defer p.Close()
	p.SetLanguage(spec.Language())
	start := clock()
	tree, err := p.ParseCtx(context.Background(), nil, text)
	if err != nil {
		t.Fatal(err)
	}
	tree.Close()
	whole := clock() - start
	limit := whole / 20
	for _, viaFlag := range []bool{true, false} {
		q := sitter.NewParser()
		q.SetLanguage(spec.Language())
		var flag *uintptr
		if viaFlag {
			flag = cancelFlag(q)
		}
		start := clock()
		tree, over, err := limitedParse(limit, flag, func(ctx context.Context) (*sitter.Tree, error) {
			return q.ParseCtx(ctx, nil, text)
		})
		used := clock() - start
		q.Close()
		if tree != nil || !over || !errors.Is(err, ErrCPULimit) {
			t.Fatalf("flag %v: tree %v, over %v, error %v; want ErrCPULimit", viaFlag, tree != nil, over, err)
		}
		if used > whole/2 {
			t.Errorf("flag %v: the stopped parse used %v of CPU, the whole parse %v (limit %v): not stopped early", viaFlag, used, whole, limit)
		}
	}
}

// BenchmarkParseWatch measures what the CPU time limit costs a parse: 200 Python
// texts of about 4 KB per op, parsed bare (ParseCtx, no limit), through Parsers (the
// watchdog a timer, the stop through the parser's flag) and with the watchdog's
// fallback (the stop through the context: smacker starts a goroutine per parse).
//
//	go test -run '^$' -bench ParseWatch -count 6 ./grammars
func BenchmarkParseWatch(b *testing.B) {
	spec := Lookup("python")
	texts := make([][]byte, 200)
	for i := range texts {
		var sb strings.Builder
		for j := range 40 {
			fmt.Fprintf(&sb, "def f%d_%d(a, b=None):\n    return [x * a for x in (b or [])] or %d\n", i, j, j)
		}
		texts[i] = []byte(sb.String())
	}
	p := sitter.NewParser()
	defer p.Close()
	p.SetLanguage(spec.Language())
	b.Run("bare", func(b *testing.B) {
		for b.Loop() {
			for _, text := range texts {
				tree, err := p.ParseCtx(context.Background(), nil, text)
				if err != nil {
					b.Fatal(err)
				}
				tree.Close()
			}
		}
	})
	b.Run("parsers", func(b *testing.B) {
		ps := NewParsers(0)
		defer ps.Close()
		for b.Loop() {
			for _, text := range texts {
				tree, _, err := ps.Parse(spec, text)
				if err != nil {
					b.Fatal(err)
				}
				tree.Close()
			}
		}
	})
	b.Run("context", func(b *testing.B) {
		for b.Loop() {
			for _, text := range texts {
				tree, _, err := limitedParse(DefaultParseCPULimit, nil, func(ctx context.Context) (*sitter.Tree, error) {
					return p.ParseCtx(ctx, nil, text)
				})
				if err != nil {
					b.Fatal(err)
				}
				tree.Close()
			}
		}
	})
}
