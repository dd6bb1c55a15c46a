package symbols

import "testing"

// TestGoBinds: the package name a Go import binds: its explicit name, else the path's
// last element without a major version (`/v5`, gopkg.in's `.v3`) or a go- prefix.
func TestGoBinds(t *testing.T) {
	for _, c := range []struct {
		alias, mod, q string
		want          bool
	}{
		{"", "example.com/shop/util", "util", true},
		{"", "example.com/shop/util", "shop", false},
		{"u", "example.com/shop/util", "u", true},
		{"u", "example.com/shop/util", "util", false},
		{"", "github.com/go-chi/chi/v5", "chi", true},
		{"", "github.com/go-chi/chi/v5/middleware", "middleware", true},
		{"", "gopkg.in/yaml.v3", "yaml", true},
		{"", "github.com/mattn/go-isatty", "isatty", true},
		{"", "v2", "v2", true},
	} {
		if got := goBinds(c.alias, c.mod, c.q); got != c.want {
			t.Errorf("goBinds(%q, %q, %q) = %v, want %v", c.alias, c.mod, c.q, got, c.want)
		}
	}
}
