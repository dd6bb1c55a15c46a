//go:build race

package crossrepo_test

// raceEnabled reports whether the tests run with the race detector, which slows
// bleve's indexing some 10 times.
const raceEnabled = true
