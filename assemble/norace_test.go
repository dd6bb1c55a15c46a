//go:build !race

package assemble

// raceEnabled reports whether the tests run with the race detector.
const raceEnabled = false
