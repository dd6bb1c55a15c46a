package grammars

import (
	"context"
	"fmt"
	"time"

	sitter "github.com/smacker/go-tree-sitter"
)

// Parsers holds one tree-sitter parser per language and parses with the tree-sitter
// rules this project relies on. It is not safe for concurrent use (tree-sitter
// parsers are per goroutine): give each goroutine its own, and Close it when done.
type Parsers struct {
	limit  time.Duration
	m      map[string]*sitter.Parser
	ranged map[string]*sitter.Parser // for ParseRanges, which sets included ranges
}

// NewParsers returns parsers whose parses stop once they have used limit of their
// thread's CPU time (<= 0 means DefaultParseCPULimit), with ErrCPULimit: a safety
// net against parser hangs, never a wall-clock limit (see cpulimit.go).
func NewParsers(limit time.Duration) *Parsers {
	if limit <= 0 {
		limit = DefaultParseCPULimit
	}
	return &Parsers{limit: limit, m: map[string]*sitter.Parser{}, ranged: map[string]*sitter.Parser{}}
}

// Close frees the parsers; they must not be used afterwards.
func (ps *Parsers) Close() {
	for _, p := range ps.m {
		p.Close()
	}
	for _, p := range ps.ranged {
		p.Close()
	}
	ps.m, ps.ranged = nil, nil
}

// Parse parses text in spec's language after spec.Rewrite. It returns the tree, which
// the caller must Close, and the text that was parsed (node byte offsets refer to
// both it and text, since rewrites keep the length). It returns an error when
// tree-sitter returns no tree (the parser is then Reset), wrapping ErrCPULimit when
// the parse used more than the CPU time limit (the parser is then replaced).
func (ps *Parsers) Parse(spec *Spec, text []byte) (*sitter.Tree, []byte, error) {
	src := text
	if spec.Rewrite != nil {
		src = spec.Rewrite(text)
	}
	tree, err := ps.parse(ps.m, spec, src, nil)
	if err != nil {
		return nil, nil, err
	}
	return tree, src, nil
}

// parse parses src with pool's parser of spec's language (made when missing), in
// ranges when not nil, under the CPU time limit; a parser whose parse ran over it
// leaves the pool.
func (ps *Parsers) parse(pool map[string]*sitter.Parser, spec *Spec, src []byte, ranges []sitter.Range) (*sitter.Tree, error) {
	p := pool[spec.Name]
	if p == nil {
		p = sitter.NewParser()
		p.SetLanguage(spec.Language())
		pool[spec.Name] = p
	}
	if ranges != nil {
		p.SetIncludedRanges(ranges)
	}
	tree, over, err := limitedParse(ps.limit, cancelFlag(p), func(ctx context.Context) (*sitter.Tree, error) {
		return p.ParseCtx(ctx, nil, src)
	})
	if over {
		// tree-sitter's cancellation flag may stay set (see watchCtx): a new parser.
		p.Close()
		delete(pool, spec.Name)
		return nil, fmt.Errorf("%w (%v; %s, %d bytes)", ErrCPULimit, ps.limit, spec.Name, len(src))
	}
	if err != nil || tree == nil {
		p.Reset()
		if err == nil {
			err = fmt.Errorf("grammars: tree-sitter returned no tree")
		}
		return nil, fmt.Errorf("grammars: parse failed: %w", err)
	}
	return tree, nil
}

// ParseRanges parses only the given byte ranges of text, in spec's language, as if
// they were one text: tree-sitter's included ranges, so that node offsets are those
// of text. text is parsed as given (spec.Rewrite is not applied: pass the text
// Parse returned). The ranges must be in order, not overlap, and lie in text; their
// points must agree with their bytes. Errors as for Parse.
func (ps *Parsers) ParseRanges(spec *Spec, text []byte, ranges []sitter.Range) (*sitter.Tree, error) {
	if len(ranges) == 0 {
		return nil, fmt.Errorf("grammars: no ranges to parse")
	}
	return ps.parse(ps.ranged, spec, text, ranges)
}
