//go:build race

package batch

// raceEnabled reports whether the tests run with the race detector, which slows
// indexing (bleve, tree-sitter glue, LSA) by 5-30 times.
const raceEnabled = true
