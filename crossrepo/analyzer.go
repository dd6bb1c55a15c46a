package crossrepo

import (
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/registry"

	"github.com/repoctx/repoctx/retrieve"
)

// AnalyzerName is the name under which the code analyser is registered with bleve:
// identifiers whole and split on camelCase, snake_case and letter/digit changes,
// lower-cased, exactly the terms [retrieve.Tokens] gives the in-house BM25.
const AnalyzerName = "repoctx_code"

// tokenizerName is the name of the code analyser's tokenizer in bleve's registry.
const tokenizerName = "repoctx_code_tokens"

// codeTokenizer is a bleve tokenizer emitting [retrieve.Tokens]' terms. Byte offsets
// are not kept (the index stores no term vectors); positions count the terms.
type codeTokenizer struct{}

// Tokenize returns the terms of input in [retrieve.Tokens]' order.
func (codeTokenizer) Tokenize(input []byte) analysis.TokenStream {
	toks := retrieve.Tokens(string(input))
	out := make(analysis.TokenStream, len(toks))
	for i, t := range toks {
		out[i] = &analysis.Token{Term: []byte(t), Position: i + 1, Type: analysis.AlphaNumeric}
	}
	return out
}

func init() {
	// Registered once per process; a second registration of a name is an error bleve
	// reports, which cannot happen here (init runs once).
	registry.RegisterTokenizer(tokenizerName, func(map[string]interface{}, *registry.Cache) (analysis.Tokenizer, error) {
		return codeTokenizer{}, nil
	})
	registry.RegisterAnalyzer(AnalyzerName, func(map[string]interface{}, *registry.Cache) (analysis.Analyzer, error) {
		return &analysis.DefaultAnalyzer{Tokenizer: codeTokenizer{}}, nil
	})
}
