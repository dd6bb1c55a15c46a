package grammars

// Design note: the parse limit.
//
// A parse must give the same tree on a quiet and on a loaded machine, so nothing
// measured in wall-clock time may stop it: tree-sitter's own limit,
// ts_parser_set_timeout_micros (smacker's SetOperationLimit), reads CLOCK_MONOTONIC,
// and a parse that needs 0.2 s of CPU ran over a 5 s limit on a machine with eight
// busy processes. tree-sitter no longer has an operation-count limit (replaced by
// the clock in tree-sitter PR #301) and smacker exposes no progress callback, so the
// limit is measured in CPU time of the thread that parses, which other processes
// barely change: the parsing goroutine is locked to its OS thread, and a watchdog
// reads that thread's CPU clock (Linux: clock_gettime on the thread's CPU-time clock
// id) and, past the limit, stops the parse through tree-sitter's cancellation flag.
// The limit is a safety net against parser hangs, set far above what real files
// need; a parse that used more CPU than the limit is over it even when the watchdog
// had not stopped it yet, so a tiny limit fails every parse (tests force the limit
// so).
// Platforms without a readable thread CPU clock measure the parse's wall-clock time
// instead.
//
// The watchdog is a timer ([time.AfterFunc]), not a goroutine, and it sets the flag
// smacker registers with tree-sitter for each parser itself (cancelFlag), so the
// parse's context is never done and smacker's ParseCtx starts no goroutine to watch
// it: a goroutine per parse, woken when the parse ends, added 10-40 % to the time
// of parsing 4 KB of Python (BenchmarkParseWatch). Where smacker's Parser has
// no such field (another version of the binding) the watchdog closes the Done
// channel of the parse's context (watchCtx) instead, and smacker sets the flag.

import (
	"context"
	"errors"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	sitter "github.com/smacker/go-tree-sitter"
)

// DefaultParseCPULimit is the CPU time of its thread one parse may use when a
// [Parsers] is made with limit <= 0: a guard against parser hangs only. The slowest
// file of the 14 repositories of the README's languages table (fmt's 533 KB
// gmock-gtest-all.cc) takes 0.21 s of user time to chunk, a 1 MB C file dense with
// syntax errors 0.96 s (`/usr/bin/time repoctx chunk FILE`; the README's "What
// happens with bad input").
const DefaultParseCPULimit = 60 * time.Second

// ErrCPULimit is the error (wrapped) of a parse stopped for using more CPU time of
// its thread than the limit of its [Parsers]. Unlike a syntax error it depends on
// the machine, not only on the text: callers must not cache what they derive from it.
var ErrCPULimit = errors.New("grammars: the parse used more CPU time than its limit")

// watchCtx is the context a parse runs under when its parser's cancellation flag is
// unknown (see cancelFlag): smacker's ParseCtx sets the flag once Done is closed.
// Done is closed only by the watchdog, and only while the parse runs (see
// limitedParse), never after: smacker's goroutine could otherwise set the flag of a
// finished parse, failing the parser's next parse.
type watchCtx struct {
	done chan struct{}
	mu   sync.Mutex
	err  error
}

func (c *watchCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *watchCtx) Done() <-chan struct{}       { return c.done }
func (c *watchCtx) Value(any) any               { return nil }
func (c *watchCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// limitedParse runs parse (a ParseCtx call of a parser whose cancellation flag is
// flag, nil when unknown) on a locked OS thread with a watchdog that cancels it once
// it has used limit of the thread's CPU time: through flag when known (parse gets a
// context that is never done, so smacker starts no goroutine), else through the
// context parse gets. over reports that the parse used more than limit, whether or
// not the watchdog stopped it; the tree is then closed and nil, and the parser may
// hold tree-sitter's cancellation flag set: the caller must not use it again.
func limitedParse(limit time.Duration, flag *uintptr, parse func(ctx context.Context) (*sitter.Tree, error)) (tree *sitter.Tree, over bool, err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	clock := threadClock()
	start := clock()
	wctx := &watchCtx{} // its mutex guards the watchdog's state either way
	var ctx context.Context = context.Background()
	if flag == nil {
		wctx.done = make(chan struct{})
		ctx = wctx
	}
	var finished, fired bool // under wctx.mu
	// Nearly every parse ends long before limit: a timer that never fires costs no
	// goroutine. When it fires it compares the thread's CPU time with limit and sets
	// itself again for the rest (CPU time cannot run faster than the wall clock).
	var t *time.Timer
	check := func() {
		wctx.mu.Lock()
		defer wctx.mu.Unlock()
		if finished {
			return
		}
		if used := clock() - start; used < limit {
			t.Reset(max(limit-used, time.Millisecond))
			return
		}
		fired = true
		if flag != nil {
			atomic.StoreUintptr(flag, 1)
			return
		}
		wctx.err = ErrCPULimit
		close(wctx.done)
	}
	wctx.mu.Lock()
	t = time.AfterFunc(limit, check)
	wctx.mu.Unlock()
	tree, err = parse(ctx)
	used := clock() - start
	wctx.mu.Lock()
	finished = true
	t.Stop()
	over = fired || used > limit
	wctx.mu.Unlock()
	if over {
		if tree != nil {
			tree.Close()
		}
		return nil, true, ErrCPULimit
	}
	return tree, false, err
}

// cancelFlag returns the cancellation flag smacker's NewParser registered with
// tree-sitter for p (tree-sitter stops a parse between tokens once it is not 0), or
// nil when smacker's Parser has no such field (another version of the binding;
// TestCancelFlag checks this one).
func cancelFlag(p *sitter.Parser) *uintptr {
	if cancelField < 0 {
		return nil
	}
	f := reflect.ValueOf(p).Elem().Field(cancelField)
	if f.IsNil() {
		return nil
	}
	return (*uintptr)(f.UnsafePointer())
}

// cancelField is the index of the field "cancel" (a *uintptr) of smacker's Parser,
// or -1.
var cancelField = func() int {
	f, ok := reflect.TypeFor[sitter.Parser]().FieldByName("cancel")
	if !ok || len(f.Index) != 1 || f.Type.Kind() != reflect.Pointer || f.Type.Elem().Kind() != reflect.Uintptr {
		return -1
	}
	return f.Index[0]
}()

// wallClock returns the wall-clock time since the call.
func wallClock() func() time.Duration {
	t0 := time.Now()
	return func() time.Duration { return time.Since(t0) }
}
