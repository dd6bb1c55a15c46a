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
// goroutine reads that thread's CPU clock (Linux: clock_gettime on the thread's
// CPU-time clock id) and, past the limit, stops the parse through tree-sitter's
// cancellation flag (smacker sets it when the parse's context is done). The limit is
// a safety net against parser hangs, set far above what real files need; a parse
// that used more CPU than the limit is over it even when the watchdog had not
// stopped it yet, so a tiny limit fails every parse (tests force the limit so).
// Platforms without a readable thread CPU clock measure the parse's wall-clock time
// instead.

import (
	"errors"
	"runtime"
	"sync"
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

// watchCtx is the context a parse runs under: smacker's ParseCtx sets the parser's
// cancellation flag once Done is closed. Done is closed only by the watchdog, and
// only while the parse runs (see limitedParse), never after: smacker's goroutine
// could otherwise set the flag of a finished parse, failing the parser's next parse.
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

// limitedParse runs parse (a ParseCtx call of p under ctx) on a locked OS thread
// with a watchdog that cancels it once it has used limit of the thread's CPU time.
// over reports that the parse used more than limit, whether or not the watchdog
// stopped it; the tree is then closed and nil, and p may hold tree-sitter's
// cancellation flag set: the caller must not use p again.
func limitedParse(limit time.Duration, parse func(ctx *watchCtx) (*sitter.Tree, error)) (tree *sitter.Tree, over bool, err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	clock := threadClock()
	start := clock()
	ctx := &watchCtx{done: make(chan struct{})}
	var finished, fired bool // under ctx.mu
	stop := make(chan struct{})
	go func() {
		wait := limit
		for {
			t := time.NewTimer(wait)
			select {
			case <-stop:
				t.Stop()
				return
			case <-t.C:
			}
			used := clock() - start
			if used < limit {
				// CPU time cannot run faster than the wall clock: sleep at least the rest.
				wait = max(limit-used, time.Millisecond)
				continue
			}
			ctx.mu.Lock()
			if !finished {
				fired = true
				ctx.err = ErrCPULimit
				close(ctx.done)
			}
			ctx.mu.Unlock()
			return
		}
	}()
	tree, err = parse(ctx)
	used := clock() - start
	close(stop)
	ctx.mu.Lock()
	finished = true
	over = fired || used > limit
	ctx.mu.Unlock()
	if over {
		if tree != nil {
			tree.Close()
		}
		return nil, true, ErrCPULimit
	}
	return tree, false, err
}

// wallClock returns the wall-clock time since the call.
func wallClock() func() time.Duration {
	t0 := time.Now()
	return func() time.Duration { return time.Since(t0) }
}
