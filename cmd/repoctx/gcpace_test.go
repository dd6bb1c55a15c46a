package main

import "testing"

// TestGCPercentFor checks paceGC's percent against the live heap: gcPercent up to
// 128 MB, the 256 MB headroom above that, a quarter of the live heap from 1 GB on.
func TestGCPercentFor(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, gcPercent}, {1, gcPercent}, {64 * mb, gcPercent}, {128 * mb, 200}, {256 * mb, 100},
		{512 * mb, 50}, {1024 * mb, 25}, {4096 * mb, 25}, {1 << 40, 25},
	} {
		if got := gcPercentFor(c.live); got != c.want {
			t.Errorf("gcPercentFor(%d MB) = %d, want %d", c.live/mb, got, c.want)
		}
	}
}
