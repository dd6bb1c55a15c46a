//go:build !race

package batch

// raceEnabled reports whether the tests run with the race detector.
const raceEnabled = false
