//go:build !linux

package grammars

import "time"

// threadClock returns the wall-clock time since the call: this platform's thread CPU
// clocks are not readable from another thread without cgo, so the parse limit is one
// of wall-clock time here (see the design note of cpulimit.go).
func threadClock() func() time.Duration { return wallClock() }
