//go:build race

package eval

// raceEnabled reports whether the tests run with the race detector, which
// slows indexing (bleve, tree-sitter glue) by 5-30 times.
const raceEnabled = true
