package rust

import "testing"

// TestRustRewrite: Rust 2024 words the bundled grammar does not know are blanked,
// same length; the same words elsewhere are kept.
func TestRustRewrite(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"unsafe extern \"C\" {\n    pub safe fn abs(x: i32) -> i32;\n    safe static N: u8;\n}\n",
			"       extern \"C\" {\n    pub      fn abs(x: i32) -> i32;\n         static N: u8;\n}\n"},
		{"let p = &raw const x; let q = &raw mut *v;\n", "let p = &          x; let q = &    mut *v;\n"},
		{"let f = async |x| x; let g = async move |y| y;\n", "let f =       |x| x; let g =       move |y| y;\n"},
		{"let g = gen { yield 1; }; f(gen move { yield 2; });\nreturn gen {};\n",
			"let g =     { yield 1; }; f(    move { yield 2; });\nreturn     {};\n"},
		// Kept: unsafe fn, async fn and blocks, a variable named gen or raw, safe as a name.
		{"unsafe fn f() {}\nasync fn g() { async move { 1 }.await }\nif gen { raw(1) }\nlet safe = 1; &raw;\nlet unsafe_extern = 1;\n", ""},
	} {
		want := c.want
		if want == "" {
			want = c.in
		}
		if got := string(Rewrite([]byte(c.in))); got != want {
			t.Errorf("Rewrite(%q) =\n%q, want\n%q", c.in, got, want)
		}
	}
}
