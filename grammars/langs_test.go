package grammars

import (
	"slices"
	"strings"
	"testing"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/kotlin"

	"github.com/repoctx/repoctx/grammars/kotlin2"
)

// TestSpecNodeTypes: every node type a spec names exists in its grammar (a typo
// would silently never match), and every spec has the fields the chunker, symbols
// and `dataset from-git` rely on.
func TestSpecNodeTypes(t *testing.T) {
	for _, name := range Names() {
		s := Lookup(name)
		lang := s.Language()
		known := map[string]bool{}
		langs := []*sitter.Language{lang}
		if name == "kotlin" {
			// The Kotlin spec maps the node types of both Kotlin grammars (see
			// kotlin_fwcd.go, kotlin_tsg.go): either may be the one compiled in.
			langs = append(langs, kotlin.GetLanguage())
			if kotlin2.Available {
				langs = append(langs, kotlin2.GetLanguage())
			} else {
				for _, ty := range []string{"block", "block_comment"} { // the newer grammar's, named in the spec
					known[ty] = true
				}
			}
		}
		for _, l := range langs {
			for i := 0; i < int(l.SymbolCount()); i++ {
				known[l.SymbolName(sitter.Symbol(i))] = true
			}
		}
		check := func(field string, types []string) {
			for _, ty := range types {
				if !known[ty] {
					t.Errorf("%s: %s names node type %q, which the grammar does not have", name, field, ty)
				}
			}
		}
		keys := func(m map[string]bool) []string {
			var out []string
			for k := range m {
				out = append(out, k)
			}
			slices.Sort(out)
			return out
		}
		var defs []string
		for k := range s.Definitions {
			defs = append(defs, k)
		}
		check("Definitions", defs)
		check("Wrappers", keys(s.Wrappers))
		check("Bodies", keys(s.Bodies))
		check("Comments", keys(s.Comments))
		check("SignatureSkip", keys(s.SignatureSkip))
		check("Flatten", keys(s.Flatten))
		check("Strings", keys(s.Strings))
		if s.Version == "" || len(s.Definitions) == 0 || len(s.Bodies) == 0 || len(s.Comments) == 0 ||
			s.DefName == nil || s.LeadingLine == nil || len(s.Keywords) == 0 || s.SkipLine == nil {
			t.Errorf("%s: spec lacks a version, definitions, bodies, comments, DefName, LeadingLine, keywords or SkipLine", name)
		}
		for _, c := range s.CommentBytes + s.SignatureSkipBytes {
			if c > 127 {
				t.Errorf("%s: non-ASCII comment or skip byte %q", name, c)
			}
		}
	}
}

// TestFamilies: Kotlin and Java, TypeScript, TSX and JavaScript, C and C++ are
// families; Python and the others are alone.
func TestFamilies(t *testing.T) {
	for lang, want := range map[string]string{
		"kotlin": "java,kotlin", "java": "java,kotlin",
		"typescript": "javascript,tsx,typescript", "javascript": "javascript,tsx,typescript", "tsx": "javascript,tsx,typescript",
		"c": "c,cpp", "cpp": "c,cpp",
		"python": "python", "go": "go", "rust": "rust", "csharp": "csharp", "ruby": "ruby", "php": "php",
		"swift": "swift", "scala": "scala", "nosuch": "nosuch",
	} {
		if got := strings.Join(Family(lang), ","); got != want {
			t.Errorf("Family(%s) = %s, want %s", lang, got, want)
		}
	}
}
