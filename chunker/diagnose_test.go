package chunker

import (
	"fmt"
	"strings"
	"testing"
)

// TokenWindows counts the Fallback windows cut inside string literals and comments
// (an embedded script, a long doc comment) and not those cut in code or in text with
// parse errors; the chunks stay Fallback.
func TestTokenWindows(t *testing.T) {
	var script, doc, rows strings.Builder
	for i := 0; i < 120; i++ {
		fmt.Fprintf(&script, "    echo \"step %03d\" && run_step %d --verbose || exit 1\n", i, i)
		fmt.Fprintf(&doc, "// Note %03d: the quick brown fox jumps over the lazy dog.\n", i)
		fmt.Fprintf(&rows, "\t\"key%03d\": %d,\n", i, i)
	}
	for _, tc := range []struct {
		name, path, src string
		all             bool // every fallback chunk counts, else none
	}{
		{"raw string constant", "a.go", "package demo\n\nconst script = `\n" + script.String() + "`\n\nfunc f() {}\n", true},
		{"raw string argument", "b.go", "package demo\n\nfunc write(w io.Writer) {\n\tfmt.Fprintf(w, `\n" + script.String() + "`, name)\n}\n", true},
		{"block doc comment", "c.go", "package demo\n\n/*\n" + doc.String() + "*/\nfunc documented() {}\n", true},
		{"composite literal", "d.go", "package demo\n\nvar table = map[string]int{\n" + rows.String() + "}\n", false},
		{"python string", "e.py", "HELP = \"\"\"\n" + script.String() + "\"\"\"\n", true},
		{"parse error", "f.go", "package demo\n\nfunc broken( {\n\tx := `\n" + script.String() + "`\n", false},
	} {
		f, cs := chunkString(t, tc.path, tc.src, Options{})
		fallback, perr := 0, 0
		for _, c := range cs {
			if c.Fallback {
				fallback++
			}
			if c.ParseError {
				perr++
			}
		}
		if (perr > 0) != (tc.name == "parse error") {
			t.Fatalf("%s: %d chunks with parse errors\n%s", tc.name, perr, dump(cs))
		}
		if fallback < 3 {
			t.Fatalf("%s: %d fallback windows, want several\n%s", tc.name, fallback, dump(cs))
		}
		s := NewStructural(Options{})
		n, err := s.TokenWindows(f, cs)
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		if tc.all {
			want = fallback
		}
		if n != want {
			t.Errorf("%s: TokenWindows %d of %d fallback chunks, want %d\n%s", tc.name, n, fallback, want, dump(cs))
		}
	}
}

// A run of line comments above a definition that is over the size cap is cut
// between its lines (each a comment node: a syntax boundary), into pieces that tile
// it, fit the cap and are not Fallback; a block comment over the cap stays windowed.
func TestCommentRunSplit(t *testing.T) {
	var doc strings.Builder
	for i := 0; i < 120; i++ {
		fmt.Fprintf(&doc, "/// Note %03d: the quick brown fox jumps over the lazy dog.\n", i)
	}
	for _, tc := range []struct{ path, src, def string }{
		{"a.go", "package demo\n\n" + strings.ReplaceAll(doc.String(), "///", "//") + "func documented() {}\n", "documented"},
		{"b.cs", "class C\n{\n" + doc.String() + "    public void Documented() { }\n}\n", "Documented"},
		{"c.py", strings.ReplaceAll(doc.String(), "///", "#") + "def documented():\n    pass\n", "documented"},
	} {
		_, cs := chunkString(t, tc.path, tc.src, Options{})
		pieces, prevEnd := 0, -1
		for _, c := range cs {
			if c.Fallback {
				t.Errorf("%s: fallback chunk L%d-%d\n%s", tc.path, c.StartLine, c.EndLine, dump(cs))
			}
			if strings.Contains(c.Text, "Note ") {
				pieces++
				if prevEnd >= 0 && c.StartByte != prevEnd {
					t.Errorf("%s: comment pieces overlap or leave a gap at byte %d\n%s", tc.path, c.StartByte, dump(cs))
				}
				prevEnd = c.EndByte
			}
		}
		if pieces < 3 || cs[len(cs)-1].Name != tc.def && cs[len(cs)-2].Name != tc.def {
			t.Errorf("%s: %d comment pieces, want several, then %s\n%s", tc.path, pieces, tc.def, dump(cs))
		}
	}
}
