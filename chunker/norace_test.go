//go:build !race

package chunker

// raceEnabled reports whether the tests run with the race detector.
const raceEnabled = false
