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
	timeout time.Duration
	m       map[string]*sitter.Parser
	ranged  map[string]*sitter.Parser // for ParseRanges, which sets included ranges
}

// NewParsers returns parsers whose parses stop after timeout (<= 0 means 5s).
func NewParsers(timeout time.Duration) *Parsers {
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	return &Parsers{timeout: timeout, m: map[string]*sitter.Parser{}, ranged: map[string]*sitter.Parser{}}
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
// both it and text, since rewrites keep the length). It returns an error when the
// parse times out or tree-sitter returns no tree; the parser is then Reset.
//
// The time limit is tree-sitter's own (ts_parser_set_timeout_micros), not a
// cancellable context: smacker's ParseCtx starts a goroutine that can set the
// parser's cancel flag after the parse has already finished, when the context is
// cancelled later; the flag then stays set and every later parse on that parser fails
// (seen as random whole-file fallbacks). context.Background() starts no such goroutine.
func (ps *Parsers) Parse(spec *Spec, text []byte) (*sitter.Tree, []byte, error) {
	p := ps.m[spec.Name]
	if p == nil {
		p = sitter.NewParser()
		p.SetLanguage(spec.Language())
		ps.m[spec.Name] = p
	}
	src := text
	if spec.Rewrite != nil {
		src = spec.Rewrite(text)
	}
	p.SetOperationLimit(int(ps.timeout / time.Microsecond))
	tree, err := p.ParseCtx(context.Background(), nil, src)
	if err != nil || tree == nil {
		p.Reset()
		if err == nil {
			err = fmt.Errorf("grammars: tree-sitter returned no tree")
		}
		return nil, nil, fmt.Errorf("grammars: parse failed or timed out: %w", err)
	}
	return tree, src, nil
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
	p := ps.ranged[spec.Name]
	if p == nil {
		p = sitter.NewParser()
		p.SetLanguage(spec.Language())
		ps.ranged[spec.Name] = p
	}
	p.SetIncludedRanges(ranges)
	p.SetOperationLimit(int(ps.timeout / time.Microsecond))
	tree, err := p.ParseCtx(context.Background(), nil, text)
	if err != nil || tree == nil {
		p.Reset()
		if err == nil {
			err = fmt.Errorf("grammars: tree-sitter returned no tree")
		}
		return nil, fmt.Errorf("grammars: parse failed or timed out: %w", err)
	}
	return tree, nil
}
