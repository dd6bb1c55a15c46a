package swift

import (
	"testing"
)

// TestSwiftRewrite: freestanding macros become calls and `sending` goes, same
// length; directives and other text are kept.
func TestSwiftRewrite(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"#expect(a == b)\n", " expect(a == b)\n"},
		{"#if canImport(Darwin)\n#endif\nlet s = #selector(f)\n", "#if canImport(Darwin)\n#endif\nlet s = #selector(f)\n"},
		{"func f(_ e: sending @escaping () -> Void) -> sending T\n", "func f(_ e:         @escaping () -> Void) ->         T\n"},
		{"let sending = 1; sending(x)\n", "let sending = 1; sending(x)\n"},
		{"return .success(())\n", "return .success( 0)\n"},
		{"g((), 1); let x = ()\nreturn ()\n", "g( 0, 1); let x =  0\nreturn  0\n"},
		{"func f() -> () {}\nlet t: () = 1\nlet c: (()) -> Void = h\nf()\n", "func f() -> () {}\nlet t: () = 1\nlet c: (()) -> Void = h\nf()\n"},
		{"private nonisolated(unsafe) var v: Int\n", "private nonisolated         var v: Int\n"},
		{"_ = consume r; f(copy x)\nx.consume(y); let copy = 1\n", "_ =         r; f(     x)\nx.consume(y); let copy = 1\n"},
		{"()\n", "()\n"}, {"sending x\n  consume y\n", "sending x\n  consume y\n"}, // nothing before them
	} {
		if got := string(Rewrite([]byte(c.in))); got != c.want {
			t.Errorf("Rewrite(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
