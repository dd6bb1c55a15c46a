// Package chunker splits source files into chunks for retrieval.
//
// Three strategies produce the same [Chunk] records:
//
//   - [Structural] splits along tree-sitter definition boundaries (functions, classes,
//     objects, properties), recursively splitting nodes over the size cap and greedily
//     merging small adjacent siblings up to the cap: statements, comments, properties
//     and (into chunks of at most a fourth of the cap) definitions of at most a
//     twentieth of it (split-then-merge, cAST: Zhang
//     et al., "cAST: Enhancing Code Retrieval-Augmented Generation with Structural
//     Chunking via Abstract Syntax Tree", 2025, §3). Text the parser could not place
//     becomes overlapping line windows flagged Fallback.
//   - [Fixed] cuts n-line windows with m lines of overlap (RepoCoder, Zhang et al. 2023,
//     §3.2 uses 20/10; the seed's submission used 8/2).
//   - [Aligned] cuts windows of about that size whose boundaries fall where the syntax
//     tree's statements and members start, each headed by its enclosing signatures.
//
// Both work on a [File]: source text decoded to UTF-8 with the byte-order mark removed
// and CRLF and lone CR line endings normalised to LF (see [Decode]). All byte offsets
// and line numbers of a chunk refer to that normalised text, so a CRLF or CR-only copy
// of a file yields the same chunks as its LF copy.
package chunker

import (
	"strconv"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
)

// Kind says what a chunk holds.
type Kind string

// Chunk kinds. Definition kinds come from the language's grammar spec; the others
// describe text between or inside definitions.
const (
	KindFunction Kind = "function" // a function, method, constructor or initializer
	KindClass    Kind = "class"    // a class, interface, object or enum, whole or its header part
	KindProperty Kind = "property" // a property, constant or type alias
	KindCode     Kind = "code"     // statements, imports and comments between definitions
	KindWindow   Kind = "window"   // a fixed-size window (Fixed strategy or fallback)
)

// Chunk is one retrievable piece of a file.
//
// Chunks of a file are in file order and together cover every byte of the file:
// removing the overlap of each chunk with its predecessor (StartByte < previous EndByte,
// which only windows have) and concatenating the texts gives the file back.
type Chunk struct {
	// ID is "{Path}#{Ordinal}", unique within a repository snapshot.
	ID string `json:"id"`
	// Path is the file's slash-separated path relative to the repository root.
	Path string `json:"path"`
	// Lang is the grammar name ("kotlin", "python"), or "" for an unknown language.
	Lang string `json:"lang"`
	// Ordinal is the chunk's 0-based position among its file's chunks.
	Ordinal int `json:"ordinal"`
	// Kind says what the chunk holds.
	Kind Kind `json:"kind"`
	// Name is the defined name for definition chunks ("BoundedCache", "load"), else "".
	// A chunk that holds several small sibling definitions merged has the first one's
	// name and lists them all in Names; its Kind is theirs when they share one, else
	// KindCode. A chunk holding one definition and glue has that definition's.
	Name string `json:"name,omitempty"`
	// Names lists the names of the sibling definitions a merged chunk holds, in file
	// order, Names[0] being Name ("getX", "getY"); it is nil for a chunk holding at
	// most one named definition. See [Chunk.DefNames].
	Names []string `json:"names,omitempty"`
	// StartLine and EndLine are 1-based and inclusive.
	StartLine int `json:"start_line"`
	EndLine   int `json:"end_line"`
	// StartByte and EndByte are a 0-based, half-open byte range of the normalised file text.
	StartByte int `json:"start_byte"`
	EndByte   int `json:"end_byte"`
	// Header holds the signatures of the enclosing definitions, outermost first, each with
	// white space collapsed to single spaces, e.g. ["class Settings:", "def get(self, key):"].
	// It is empty for top-level chunks. The windows of a definition too big to split,
	// after its first window, also carry its own signature (Parent is then the first
	// window); the parts of a statement too big for one chunk carry its opening, e.g.
	// "HELP =" for an assignment of a giant string, "if x:" for a long if block. At most
	// the innermost 8 entries are kept.
	Header []string `json:"header,omitempty"`
	// Parent is the ID of the chunk that starts the innermost enclosing definition, or "".
	Parent string `json:"parent,omitempty"`
	// Prev and Next are the IDs of the neighbouring chunks in file order, or "".
	Prev string `json:"prev,omitempty"`
	Next string `json:"next,omitempty"`
	// Fallback reports whether the chunk is a line or rune window cut where no usable
	// syntax boundary was found (the node was too big, or the parser failed there).
	Fallback bool `json:"fallback,omitempty"`
	// ParseError reports whether the chunk overlaps a region where the parser reported
	// ERROR or MISSING nodes, or is a window of a file whose parse failed or ran over
	// its CPU time limit (Options.ParseCPULimit; Limit says which).
	ParseError bool `json:"parse_error,omitempty"`
	// Limit names the limit that made the chunk a window, or is "": a parse over its
	// CPU time limit or failed (the whole file is windows: every chunk carries it,
	// with Fallback and ParseError), or brackets nested deeper than MaxNesting (the
	// windows of that region, with Fallback; the rest of the file is chunked along
	// its syntax). See [Limit] (which of them may be cached) and [FileLimit].
	Limit Limit `json:"limit,omitempty"`
	// Text is the chunk's content: the normalised file text [StartByte, EndByte).
	Text string `json:"text"`
}

// DefNames returns the names of the definitions the chunk holds, in file order:
// Names for a merged chunk, else Name alone, or nil for a chunk with no name. The
// result must not be modified.
func (c *Chunk) DefNames() []string {
	switch {
	case len(c.Names) > 0:
		return c.Names
	case c.Name != "":
		return []string{c.Name}
	}
	return nil
}

// ChunkID returns the ID of the chunk at ordinal n of the file at path.
func ChunkID(path string, n int) string { return path + "#" + strconv.Itoa(n) }

// SplitChunkID returns the path and the ordinal of a chunk ID as ChunkID writes it
// ("path#n", n in decimal without sign or leading zero, below 10⁹); ok is false for
// any other string.
func SplitChunkID(id string) (path string, n int, ok bool) {
	h := strings.LastIndexByte(id, '#')
	if h < 0 {
		return "", 0, false
	}
	s := id[h+1:]
	if s == "" || len(s) > 9 || (s[0] == '0' && len(s) > 1) {
		return "", 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return "", 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return id[:h], n, true
}

// Chunker splits one file into chunks. Implementations are not safe for concurrent
// use (tree-sitter parsers are per goroutine): give each goroutine its own.
type Chunker interface {
	// Chunk returns the file's chunks in file order; a file with no non-blank text
	// yields no chunks. It returns an error only when the chunker cannot run at all
	// (a parse over its limit is not an error: the file is windowed, see Chunk.Limit);
	// a parse with syntax errors is not an error.
	Chunk(f *File) ([]Chunk, error)
	// Close releases what the chunker holds (a structural chunker's parsers); the
	// chunker must not be used afterwards.
	Close()
}

// TreeChunker is a Chunker that parses: ChunkTree is Chunk that also hands the
// file's syntax tree to visit (see [Structural.ChunkTree]), so that a caller needing
// the same parse does not parse the file again. [Structural] and [Aligned] are.
type TreeChunker interface {
	Chunker
	ChunkTree(f *File, visit func(root *sitter.Node, parsed []byte)) ([]Chunk, error)
}
