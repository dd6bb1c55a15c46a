package grammars

import (
	"bytes"
	"regexp"

	sitter "github.com/smacker/go-tree-sitter"
)

// Kotlin is the spec for Kotlin. Its grammar is chosen at build time (KotlinGrammar):
// fwcd tree-sitter-kotlin 0.3.8 as bundled by smacker in a plain build, or
// tree-sitter-grammars/tree-sitter-kotlin 1.1.0 (package grammars/kotlin2) with the
// build tag kotlin2. The node types below are those of both grammars (most are
// shared; fwcd has simple_identifier, import_header and statements where the newer
// one has identifier, import and block, and the newer one has field names).
// Its Rewrite works around two known mis-parses (fwcd/tree-sitter-kotlin issues 75
// and 87): a primary constructor with a modifier on the line after the class name, and
// `fun interface`.
var Kotlin = &Spec{
	Name:       "kotlin",
	Version:    KotlinGrammar + "/r4",
	Extensions: []string{".kt", ".kts"},
	Language:   kotlinLanguage,
	Definitions: map[string]string{
		"class_declaration":     Class,
		"object_declaration":    Class,
		"companion_object":      Class,
		"function_declaration":  Function,
		"secondary_constructor": Function,
		"anonymous_initializer": Function,
		"property_declaration":  Property,
		"type_alias":            Property,
	},
	Bodies:             set("class_body", "enum_class_body", "function_body", "statements", "block"),
	Trailers:           set("getter", "setter"),
	Comments:           set("line_comment", "multiline_comment", "block_comment"),
	CommentBytes:       "/",
	SignatureSkip:      set("annotation", "line_comment", "multiline_comment", "block_comment"),
	SignatureSkipBytes: "@/",
	LeadingLine:        regexp.MustCompile(`^[ \t]*(//|/\*|\*|@)`),
	CommentLine:        regexp.MustCompile(`^[ \t]*(//|/\*|\*)`),
	DefName:            kotlinName,
	Rewrite:            kotlinRewrite,
	Imports:            kotlinImports,
	Family:             "jvm",
	Recover: &Recovery{
		Outline:      ktOutline,
		MemberPrefix: "class Q{", MemberSuffix: "\n}",
		GapPrefix: "enum class Q{", GapSuffix: "\n}",
	},
	Keywords: []string{
		"as", "break", "class", "continue", "do", "else", "false", "for", "fun", "if", "in",
		"interface", "is", "null", "object", "package", "return", "super", "this", "throw",
		"true", "try", "typealias", "typeof", "val", "var", "when", "while", "by", "catch",
		"constructor", "delegate", "dynamic", "field", "file", "finally", "get", "import",
		"init", "param", "property", "receiver", "set", "setparam", "where", "abstract",
		"actual", "annotation", "companion", "const", "crossinline", "data", "enum", "expect",
		"external", "final", "infix", "inline", "inner", "internal", "lateinit", "noinline",
		"open", "operator", "out", "override", "private", "protected", "public", "reified",
		"sealed", "suspend", "tailrec", "vararg", "it",
	},
}

func init() { MustRegister(Kotlin) }

// kotlinNames is the Kotlin symbol table for kotlinName (Kotlin.TypeOf cannot be
// used there: Kotlin's initialiser refers to kotlinName).
var kotlinNames = &symbolNames{lang: kotlinLanguage}

// kotlinName reads a definition's name: the field "name" (or, for type_alias, "type")
// in the newer grammar, the first identifier child in fwcd's, which has no fields.
func kotlinName(n *sitter.Node, src []byte) string {
	switch kotlinNames.typeOf(n) {
	case "secondary_constructor":
		return "constructor"
	case "anonymous_initializer":
		return "init"
	case "companion_object":
		if c := n.ChildByFieldName("name"); c != nil {
			return c.Content(src)
		}
		if s := firstChildOfType(kotlinNames, n, src, "type_identifier"); s != "" {
			return s
		}
		return "Companion"
	case "property_declaration":
		for i := 0; i < int(n.ChildCount()); i++ {
			c := n.Child(i)
			switch kotlinNames.typeOf(c) {
			case "variable_declaration":
				return firstChildOfType(kotlinNames, c, src, "simple_identifier", "identifier")
			case "multi_variable_declaration":
				return c.Content(src)
			}
		}
		return ""
	case "type_alias":
		if c := n.ChildByFieldName("type"); c != nil {
			return c.Content(src)
		}
	}
	if c := n.ChildByFieldName("name"); c != nil {
		return c.Content(src)
	}
	return firstChildOfType(kotlinNames, n, src, "simple_identifier", "type_identifier")
}

var (
	// `fun interface X` -> `    interface X` (fwcd issue 87). funInterfaces finds the
	// same matches by byte scanning; this is its specification, used by the tests.
	ktFunInterface = regexp.MustCompile(`\bfun(\s+interface\b)`)
	// A class header line without a body or parameter list, followed by a line starting
	// with optional modifiers (visibility, actual, expect) and annotations and
	// `constructor` (fwcd issue 75; tree-sitter-grammars 1.1.0 has the same fault).
	ktClassLine = regexp.MustCompile(`\bclass\s+[\p{L}_][\p{L}\p{N}_]*[^{(=\n]*$`)
	ktCtorLine  = regexp.MustCompile(`^[ \t]*(?:(?:public|private|protected|internal|actual|expect)[ \t]+|@[\w.]+(?:\([^)\n]*\))?[ \t]+)*constructor\b`)
	// Lines that may stand between the class header and the constructor line: an
	// annotation alone; and a line that may end a header: `>` alone, closing a type
	// parameter list spread over lines.
	ktAnnotationLine = regexp.MustCompile(`^[ \t]*@[\w.]+(?:\([^)\n]*\))?[ \t]*$`)
	ktTypeParamsEnd  = regexp.MustCompile(`^[ \t]*>[ \t]*$`)
)

// kotlinRewrite returns src with the mis-parsed constructs replaced by same-length
// equivalents, or src itself when there is nothing to rewrite: the line rewrites
// (kotlinLineRewrite), then the token rewrites of the compiled-in grammar
// (kotlinGrammarRules, see kotlinRules).
func kotlinRewrite(src []byte) []byte {
	return rewriteKotlinTokens(kotlinLineRewrite(src), kotlinGrammarRules)
}

// kotlinLineRewrite rewrites the constructor on the line after its class header
// (possibly after annotation lines; the header may end with a `>` line closing its type
// parameters) and `fun interface` (both grammars mis-parse the first; fwcd the second).
func kotlinLineRewrite(src []byte) []byte {
	out, copied := src, false // out is copied before the first change
	funIfaces := funInterfaces(src)
	if len(funIfaces) > 0 {
		out, copied = append([]byte(nil), src...), true
		for _, at := range funIfaces {
			copy(out[at:at+3], "   ")
		}
	}
	// Join a class header line to the next line when that one holds a constructor.
	// Only lines holding "constructor" are looked at; line breaks are found in src,
	// since out loses the ones it joins (its text between them is unchanged).
	ctor := []byte("constructor")
	for i := 0; ; {
		j := bytes.Index(src[i:], ctor)
		if j < 0 {
			break
		}
		j += i
		nextEnd := len(src)
		if k := bytes.IndexByte(src[j:], '\n'); k >= 0 {
			nextEnd = j + k
		}
		i = nextEnd // one look per line
		brk := bytes.LastIndexByte(src[:j], '\n')
		if brk < 0 {
			continue // the first line follows no line
		}
		next := out[brk+1 : nextEnd]
		if !ktCtorLine.Match(next) {
			continue
		}
		brks := []int{brk}
		prevStart := bytes.LastIndexByte(src[:brk], '\n') + 1
		prev := out[prevStart:brk]
		for prevStart > 0 && len(brks) < 8 && bytes.IndexByte(prev, '@') >= 0 && ktAnnotationLine.Match(prev) {
			brk = prevStart - 1
			brks = append(brks, brk)
			prevStart = bytes.LastIndexByte(src[:brk], '\n') + 1
			prev = out[prevStart:brk]
		}
		if bytes.Contains(prev, []byte("class")) && ktClassLine.Match(prev) || ktTypeParamsEnd.Match(prev) {
			if !copied {
				out, copied = append([]byte(nil), src...), true
			}
			for _, b := range brks {
				out[b] = ' '
			}
		}
	}
	return out
}

// funInterfaces returns the offsets of the `fun` of each `fun interface` in src: the
// start of every match of ktFunInterface (\bfun\s+interface\b, ASCII word boundaries
// and white space as in package regexp), found by byte scanning, which is several
// times faster than the regexp on files that have no match.
func funInterfaces(src []byte) []int {
	var out []int
	for i := 0; ; {
		j := bytes.Index(src[i:], []byte("interface"))
		if j < 0 {
			return out
		}
		j += i
		i = j + len("interface")
		if i < len(src) && isWordByte(src[i]) {
			continue
		}
		k := j
		for k > 0 && isRegexpSpace(src[k-1]) {
			k--
		}
		if k == j || k < 3 || string(src[k-3:k]) != "fun" || (k > 3 && isWordByte(src[k-4])) {
			continue
		}
		out = append(out, k-3)
	}
}

// isWordByte reports whether c is an ASCII word character (regexp's \w).
func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// isRegexpSpace reports whether c is white space as regexp's \s defines it.
func isRegexpSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}
