package assemble

import (
	"errors"
	"strings"
	"testing"

	"github.com/repoctx/repoctx"
)

// TestFamilyFilter: a repository indexed with every language gives a Kotlin hole
// chunks and definitions of Kotlin and Java (one family) only; Options.Languages
// widens or narrows that, and an unknown language is an option error.
func TestFamilyFilter(t *testing.T) {
	files := map[string]string{
		"src/Invoice.java":   "package shop;\n\npublic class Invoice {\n    public long totalCents() { return 1; }\n}\n",
		"src/invoice.py":     "class Invoice:\n    def total_cents(self):\n        return 1\n",
		"src/util.js":        "function totalCents(invoice) { return invoice.cents; }\n",
		"src/InvoiceView.kt": "package shop\n\nfun show(i: Invoice) = println(i)\n",
	}
	r := buildIndex(t, files)
	hole := repoctx.Hole{Path: "src/Report.kt", Prefix: "package shop\n\nfun report(invoice: Invoice): Long {\n    return invoice.totalCents", Suffix: "()\n}\n"}
	langsOf := func(parts []repoctx.Part) string {
		seen := map[string]bool{}
		var out []string
		for _, p := range parts {
			ext := p.Path[strings.LastIndexByte(p.Path, '.'):]
			if !seen[ext] {
				seen[ext] = true
				out = append(out, ext)
			}
		}
		return strings.Join(out, " ")
	}
	_, parts, err := compose(t, r, hole, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if got := langsOf(parts); strings.Contains(got, ".py") || strings.Contains(got, ".js") || !strings.Contains(got, ".java") {
		t.Errorf("default (family of kotlin): parts of %q, want .java and .kt only: %+v", got, parts)
	}
	var def bool
	for _, p := range parts {
		for _, w := range p.Why {
			def = def || strings.HasPrefix(w, "def:Invoice(") && p.Path == "src/Invoice.java"
		}
	}
	if !def {
		t.Errorf("the Java class Invoice is not resolved for the Kotlin hole: %+v", parts)
	}
	_, parts, err = compose(t, r, hole, with(func(o *Options) { o.Languages = []string{"kotlin", "python", "javascript"} }))
	if err != nil {
		t.Fatal(err)
	}
	if got := langsOf(parts); strings.Contains(got, ".java") || !strings.Contains(got, ".py") {
		t.Errorf("Languages kotlin,python,javascript: parts of %q, want no .java and some .py", got)
	}
	_, _, err = compose(t, r, hole, with(func(o *Options) { o.Languages = []string{"cobol"} }))
	if oe := new(repoctx.OptionError); !errors.As(err, &oe) || oe.Option != "langs" {
		t.Errorf("unknown language: %v, want an OptionError for langs", err)
	}
}
