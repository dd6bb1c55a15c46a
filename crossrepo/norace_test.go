//go:build !race

package crossrepo_test

// raceEnabled reports whether the tests run with the race detector.
const raceEnabled = false
