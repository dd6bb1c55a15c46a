// Package racetest lets a test run once, without the race detector, when the detector has
// nothing new to check in it: a CPU-bound test on one goroutine, or one whose concurrent parts
// other tests already check under -race, runs five to ten times slower under -race and finds
// no race there. make test's race pass skips such a test (Skip), and its plain pass runs it
// by name (PLAIN_TESTS in the Makefile; the package's test checks that every skipped test is
// named there). Imported by test files only.
package racetest

import "testing"

// Skip skips t when the test binary runs with the race detector. why says what makes the
// test slow on one goroutine (for example "chunks every prefix of each file"); it leads the
// skip message.
func Skip(t testing.TB, why string) {
	t.Helper()
	if Enabled {
		t.Skip(why + ": make test runs it without -race (PLAIN_TESTS in the Makefile)")
	}
}
