//go:build !race

package dataset

// raceEnabled reports whether the tests run with the race detector.
const raceEnabled = false
