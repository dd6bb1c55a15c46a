//go:build race

package racetest

// Enabled reports whether the test binary runs with the race detector (built with -race).
const Enabled = true
