package chunker

import (
	"errors"

	"github.com/repoctx/repoctx/grammars"
)

// Limit names the limit that made the structural chunker cut a whole file, or a
// region of it, into windows instead of chunking it along its syntax
// ([Chunk.Limit]), or "" for none.
type Limit string

// The limits of the structural chunker. LimitNesting depends on the text alone: the
// same file always hits it, and its windows may be cached like any chunks; it marks
// the windows of a region nested deeper than MaxNesting, the rest of the file being
// chunked along its syntax. The parse
// limits depend on the machine (the CPU time a parse may use, a safety net against
// parser hangs set far above what real files need): their windows are [Limit.Transient],
// never cached, and the file is chunked again on the next run.
const (
	LimitNone     Limit = ""
	LimitNesting  Limit = "nesting"     // brackets nest deeper than MaxNesting: the region's inside not parsed
	LimitParseCPU Limit = "parse_cpu"   // a parse used more CPU time than Options.ParseCPULimit
	LimitParse    Limit = "parse_error" // tree-sitter returned no tree for another reason
)

// Transient reports whether chunks made under limit l depend on more than the file's
// bytes and the options (the machine's speed or state), so that they must not be
// cached: true for the parse limits, false for LimitNesting and LimitNone.
func (l Limit) Transient() bool { return l == LimitParseCPU || l == LimitParse }

// FileLimit returns the limit the chunks of one file (in file order, as a Chunker
// returns them) were made under: a parse limit, which every chunk of the file
// carries (the whole file is windows), else LimitNesting when some chunk is a window
// of a region nested too deep, else LimitNone (also for no chunks).
func FileLimit(cs []Chunk) Limit {
	if len(cs) > 0 && cs[0].Limit.Transient() {
		return cs[0].Limit
	}
	for i := range cs {
		if cs[i].Limit != LimitNone {
			return cs[i].Limit
		}
	}
	return LimitNone
}

// limitCodes numbers the limits for compact encodings (LimitCode); 0 is LimitNone.
var limitCodes = []Limit{LimitNone, LimitNesting, LimitParseCPU, LimitParse}

// LimitCode returns a small number (0-3) standing for l in a compact encoding, such
// as a cached chunk record's flag bits; LimitFromCode reverses it. An unknown limit
// is coded as LimitParse's code.
func LimitCode(l Limit) byte {
	for i, x := range limitCodes {
		if x == l {
			return byte(i)
		}
	}
	return 3
}

// LimitFromCode returns the limit LimitCode coded as c (its low two bits).
func LimitFromCode(c byte) Limit { return limitCodes[c&3] }

// parseLimit returns the limit a failed parse's error err stands for.
func parseLimit(err error) Limit {
	if errors.Is(err, grammars.ErrCPULimit) {
		return LimitParseCPU
	}
	return LimitParse
}
