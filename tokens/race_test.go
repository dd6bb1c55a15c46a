//go:build race

package tokens

// raceEnabled reports whether the tests run with the race detector.
const raceEnabled = true
