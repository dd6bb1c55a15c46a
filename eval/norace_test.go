//go:build !race

package eval

// raceEnabled reports whether the tests run with the race detector.
const raceEnabled = false
