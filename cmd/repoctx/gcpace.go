package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Garbage a batch command's heap may hold beyond its live data: the larger of
// gcHeadroomBytes and the live heap over gcHeadroomDiv. gcPercent (200) lets a heap
// grow to three times its live data before a collection: `repoctx index` of 50,000
// files peaked at 6.0 GB of RSS with 2.2 GB live.
const (
	gcHeadroomBytes = 256 << 20
	gcHeadroomDiv   = 4
)

// paceGC keeps the garbage of a batch command (index, predict, eval, compare) within
// the headroom above: after each collection it sets the GC percent to 100 times the
// headroom over the live heap, between 25 and gcPercent, so that a heap of up to 128
// MB collects as before and one of 1 GB or more holds at most a quarter more than its
// live data. A GOGC set in the environment is left alone. Outputs do not depend on
// it.
func paceGC() {
	if os.Getenv("GOGC") != "" {
		return
	}
	gcPaceOnce.Do(armGCPace) // one chain of finalizers per process (tests run many commands)
}

var gcPaceOnce sync.Once

// gcPacedCommands are the commands paceGC paces: the batch ones, whose heap holds a
// whole repository or dataset (serve keeps Go's default: its latency, not its peak,
// is what a user feels).
var gcPacedCommands = map[string]bool{"index": true, "predict": true, "eval": true, "compare": true}

// gcSentinel is an object whose finalizer runs after the collection that found it
// unreachable (it holds a pointer: not a tiny allocation, whose finalizer may never
// run).
type gcSentinel struct{ _ *int }

// armGCPace sets a finalizer that, at the next collection, paces the one after and
// arms itself again.
func armGCPace() {
	runtime.SetFinalizer(&gcSentinel{}, func(*gcSentinel) {
		setGCPercent()
		armGCPace()
	})
}

// setGCPercent sets the GC percent from the live heap (paceGC).
func setGCPercent() {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	debug.SetGCPercent(gcPercentFor(s[0].Value.Uint64()))
}

// gcPercentFor returns the GC percent that lets a heap of live bytes grow by its
// headroom (paceGC): gcPercent for a heap of up to 128 MB, 100 at 256 MB, 25 from 1
// GB on.
func gcPercentFor(live uint64) int {
	if live == 0 {
		return gcPercent
	}
	headroom := max(uint64(gcHeadroomBytes), live/gcHeadroomDiv)
	return int(min(gcPercent, max(25, 100*headroom/live)))
}
