package main

import (
	"bytes"
	"strings"
	"testing"
)

const report = `go: downloading something
1000 index wall 3.20 s, CPU 4.56 s, peak RSS 360 MB, cache 36 MB
1000 query wall 0.43 s, CPU 0.51 s, peak RSS 148 MB (median of 3 by wall)
1000 serve start 0.65 s (warm cache)
1000 serve BenchmarkServe/context/plan_window=0-2 p50 4.928 ms, p95 8.015 ms, p99 10.57 ms
1000 serve BenchmarkServe/context/plan_window=8000-2 p50 4.373 ms, p95 7.902 ms, p99 11.41 ms
1000 serve peak RSS 286 MB
5000 index wall 10.42 s, CPU 15.54 s, peak RSS 892 MB, cache 119 MB
`

func TestRead(t *testing.T) {
	rows, err := read(strings.NewReader(report))
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]row{
		1000: {"index wall": 3.20, "index RSS": 360, "cache on disk": 36, "query wall": 0.43, "query RSS": 148,
			"serve start": 0.65, "p50, planner off": 4.928, "p95, planner off": 8.015, "p99, planner off": 10.57,
			"p50, plan_window 8000": 4.373, "p95, plan_window 8000": 7.902, "p99, plan_window 8000": 11.41,
			"serve RSS": 286},
		5000: {"index wall": 10.42, "index RSS": 892, "cache on disk": 119},
	}
	if len(rows) != len(want) {
		t.Fatalf("sizes %v, want %v", rows, want)
	}
	for n, w := range want {
		if len(rows[n]) != len(w) {
			t.Errorf("%d: %v, want %v", n, rows[n], w)
		}
		for k, v := range w {
			if rows[n][k] != v {
				t.Errorf("%d %s = %v, want %v", n, k, rows[n][k], v)
			}
		}
	}
	svg, err := drawChart(rows)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(bytes.TrimSpace(svg), []byte("<?xml")) || !bytes.Contains(svg, []byte("serve latency")) {
		t.Errorf("not the chart: %.200s", svg)
	}
}

func TestReadErrors(t *testing.T) {
	if _, err := read(strings.NewReader("nothing here\n")); err == nil {
		t.Error("no report lines: no error")
	}
	_, err := read(strings.NewReader("1000 serve start 0.6.5 s (warm cache)\n"))
	if err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("a bad number: %v, want an error naming line 1", err)
	}
}

// TestDrawPartial: a report cut short (some kinds of line missing for every size),
// with zeros (not drawable on a log scale) or with a single value per panel is drawn
// with what it has, its empty panels titled "(no data)", where gonum/plot's log axes
// panicked on the empty or one-value ranges.
func TestDrawPartial(t *testing.T) {
	for _, tc := range []struct{ name, report, empty string }{
		{"index lines only", "1000 index wall 3.20 s, CPU 4.56 s, peak RSS 360 MB, cache 36 MB\n" +
			"5000 index wall 10.42 s, CPU 15.54 s, peak RSS 892 MB, cache 119 MB\n", "serve latency, 500 holes (no data)"},
		{"zeros", "1000 index wall 0.00 s, CPU 0.00 s, peak RSS 0 MB, cache 0 MB\n", "time (no data)"},
		{"one value below 1", "1000 serve start 0.65 s (warm cache)\n", "memory and disk (no data)"},
		{"no -GOMAXPROCS suffix", "1000 serve BenchmarkServe/context/plan_window=0 p50 4.9 ms, p95 8.0 ms, p99 10.5 ms\n" +
			"1000 serve peak RSS 286 MB\n", "time (no data)"},
	} {
		rows, err := read(strings.NewReader(tc.report))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		svg, err := drawChart(rows)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !bytes.Contains(svg, []byte(tc.empty)) {
			t.Errorf("%s: no panel %q", tc.name, tc.empty)
		}
	}
}

// TestReadBadValues: a line of a known kind whose value is missing (the benchmark
// reported no percentiles), not a number, negative or not finite is an error naming
// the line and the value, not a line skipped.
func TestReadBadValues(t *testing.T) {
	for _, line := range []string{
		"1000 serve BenchmarkServe/context/plan_window=0-2 p50  ms, p95  ms, p99  ms",
		"1000 index wall abc s, CPU 4.56 s, peak RSS 360 MB, cache 36 MB",
		"1000 serve start -1 s (warm cache)",
		"1000 serve peak RSS Inf MB",
		"1000 query wall NaN s, CPU 0.51 s, peak RSS 148 MB (median of 3 by wall)",
	} {
		_, err := read(strings.NewReader(report + line + "\n"))
		if err == nil || !strings.Contains(err.Error(), "line 9") {
			t.Errorf("%q: %v, want an error naming line 9", line, err)
		}
	}
}
