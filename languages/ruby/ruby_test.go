package ruby

import (
	"strings"
	"testing"
)

// blank returns s with every byte but line breaks made a space.
func blank(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' {
			return r
		}
		return ' '
	}, s)
}

// TestRubyRewrite: the body of a heredoc holding another heredoc in an
// interpolation is blanked up to its terminator, same length; other heredocs and
// code are kept.
func TestRubyRewrite(t *testing.T) {
	nestedBody := "  Hi #{\n    <<~INNER.strip\n      x\n    INNER\n  }\n"
	for _, c := range []struct{ name, in, want string }{
		{"nested", "s = <<~TEXT\n" + nestedBody + "TEXT\ndef f; end\n",
			"s = <<~TEXT\n" + blank(nestedBody) + "TEXT\ndef f; end\n"},
		{"nested, dash and quoted", "f(<<-\"A\")\n#{<<'B'}\nb\nB\n  A\nx\n",
			"f(<<-\"A\")\n" + blank("#{<<'B'}\nb\nB\n") + "  A\nx\n"},
		{"two openers, second nested", "g(<<~A, <<~B)\na\nA\n#{<<~C}\nc\nC\nB\n",
			"g(<<~A, <<~B)\na\nA\n" + blank("#{<<~C}\nc\nC\n") + "B\n"},
		{"plain heredoc", "s = <<~TEXT\n  a #{b}\nTEXT\n", ""},
		{"opener as text, no interpolation", "s = <<~TEXT\n  use <<~X here\nTEXT\n", ""},
		{"single-quoted body does not interpolate", "s = <<~'T'\n#{<<~X}\nX\nT\n", ""},
		{"shift and singleton class", "a << b\nx<<Y\nclass << self\nend\n", ""},
		{"opener in a comment or string", "# <<~A\ns = \"<<~B\"\n#{<<~C}\nC\nB\nA\n", ""},
		{"no terminator", "s = <<~TEXT\n#{<<~X}\nX\n", ""},
		{"embedded document", "=begin\ns = <<~A\n=end\n#{<<~B}\nB\nA\n", ""},
	} {
		want := c.want
		if want == "" {
			want = c.in
		}
		got := string(Rewrite([]byte(c.in)))
		if got != want {
			t.Errorf("%s: Rewrite(%q) =\n%q, want\n%q", c.name, c.in, got, want)
		}
		if len(got) != len(c.in) {
			t.Errorf("%s: length %d, want %d", c.name, len(got), len(c.in))
		}
	}
}
