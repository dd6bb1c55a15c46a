package main

import (
	"strings"
	"testing"
)

// TestParseSize: sizes that would overflow or round to 0 (which means no cap) are
// errors ("inf" and "1e30" must not become MinInt64, no cap).
func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "1": 1, "5GB": 5e9, "64KiB": 64 << 10, "1.5MiB": 3 << 19} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"inf", "+Inf", "Infinity", "1e30", "1e30GB", "9300000TB", "0.5", "0.0001KB", "-1", "NaN", "5XB", ""} {
		if got, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) = %d, want an error", in, got)
		}
	}
	code, _, stderr := run(t, "cache", "gc", "--cache-dir", t.TempDir(), "--cache-max-size", "1e30")
	if code != exitUsage || !strings.Contains(stderr, "--cache-max-size") || !strings.Contains(stderr, "too large") {
		t.Errorf("cache gc --cache-max-size 1e30: exit %d, %q", code, stderr)
	}
}
