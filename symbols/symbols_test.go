package symbols

import (
	"testing"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/grammars"
)

func extractAll(t *testing.T, files map[string]string) *Table {
	t.Helper()
	e := NewExtractor(0)
	defer e.Close()
	var fs []*File
	for p, src := range files {
		f, err := chunker.Decode(p, []byte(src), 0)
		if err != nil {
			t.Fatal(err)
		}
		sf, err := e.Extract(f)
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, sf)
	}
	if lazyTables {
		return NewLazyTable(newSliceSource(fs))
	}
	return NewTable(fs)
}

var pyRepo = map[string]string{
	"shop/__init__.py": "",
	"shop/models.py": `"""Models."""


class Invoice:
    """An invoice."""

    def total(self):
        return 1


# Parse a price string.
def parse_price(text):
    return float(text)
`,
	"shop/util/__init__.py": "",
	"shop/util/money.py": `def round_money(x):
    """Round to cents."""
    return round(x, 2)


def parse_price(text):
    return 0.0
`,
	"shop/util/fmt.py": `from ..models import Invoice, parse_price as pp
from . import money
from .money import *
import shop.models as m


def show(inv):
    return str(inv)
`,
	"other/models.py": "class Invoice:\n    pass\n",
}

func TestPythonImports(t *testing.T) {
	tab := extractAll(t, pyRepo)
	f := tab.File("shop/util/fmt.py")
	want := []grammars.Import{
		{Module: "models", Level: 2, Name: "Invoice", Line: 1},
		{Module: "models", Level: 2, Name: "parse_price", Alias: "pp", Line: 1},
		{Module: "", Level: 1, Name: "money", Line: 2},
		{Module: "money", Level: 1, Star: true, Line: 3},
		{Module: "shop.models", Alias: "m", Line: 4},
	}
	if len(f.Imports) != len(want) {
		t.Fatalf("imports %+v, want %+v", f.Imports, want)
	}
	for i := range want {
		if f.Imports[i] != want[i] {
			t.Errorf("import %d: %+v, want %+v", i, f.Imports[i], want[i])
		}
	}
	if f.Package != "shop.util.fmt" {
		t.Errorf("package %q", f.Package)
	}
}

func TestPythonResolve(t *testing.T) {
	tab := extractAll(t, pyRepo)
	tests := []struct {
		name, from, wantPath, wantVia string
	}{
		{"Invoice", "shop/util/fmt.py", "shop/models.py", "import"}, // relative ..models, not other/models.py
		{"pp", "shop/util/fmt.py", "shop/models.py", "import"},      // alias of parse_price
		{"round_money", "shop/util/fmt.py", "shop/util/money.py", "star-import"},
		{"show", "shop/util/fmt.py", "shop/util/fmt.py", "same-file"},
	}
	for _, tt := range tests {
		got := tab.Resolve(tt.name, tt.from, nil, 3)
		if len(got) == 0 || got[0].Def.Path != tt.wantPath || got[0].Via != tt.wantVia {
			t.Errorf("Resolve(%s from %s) = %+v, want %s via %s", tt.name, tt.from, got, tt.wantPath, tt.wantVia)
		}
	}
	c := tab.Resolve("Invoice", "shop/util/fmt.py", nil, 1)[0].Def
	if c.Signature != "class Invoice:" || c.Doc != `"""An invoice."""` || c.StartLine != 4 {
		t.Errorf("Invoice def %+v", c)
	}
	pp := tab.Resolve("parse_price", "shop/models.py", nil, 1)[0].Def
	if pp.Doc != "# Parse a price string." {
		t.Errorf("comment doc %q", pp.Doc)
	}
	// A member use whose receiver is unknown: a method of an imported module's class.
	if m := tab.ResolveUse(Use{Name: "total", Qualifiers: []string{ExprReceiver}}, Site{From: "shop/util/fmt.py"}, 1); len(m) == 0 || m[0].Def.Container != "Invoice" || m[0].Via != ViaImportedMd {
		t.Errorf("method container: %+v", m)
	}
	// Python binds a bare name only by definition, assignment or import: Invoice used
	// bare in a file that does not import it is not other/models.py's.
	if m := tab.Resolve("Invoice", "other/x.py", nil, 3); len(m) != 0 {
		t.Errorf("bare Invoice without an import resolved to %+v", m)
	}
}

var ktRepo = map[string]string{
	"src/model/Issue.kt": `package com.acme.model

/** One issue. */
data class Issue(val id: Long, val title: String)

enum class Priority { LOW, HIGH }
`,
	"src/model/Status.kt": `package com.acme.model

sealed class Status {
    object Open : Status()
}
`,
	"src/util/Text.kt": `package com.acme.util

fun slugify(s: String): String = s.lowercase()
`,
	"src/service/Service.kt": `package com.acme.service

import com.acme.model.Issue
import com.acme.model.*
import com.acme.util.slugify as slug

class Service {
    fun make(title: String) = Issue(1, slug(title))
}
`,
	"src/other/Issue.kt": "package com.other\n\nclass Issue\n",
}

func TestKotlinImportsAndResolve(t *testing.T) {
	tab := extractAll(t, ktRepo)
	f := tab.File("src/service/Service.kt")
	if f.Package != "com.acme.service" || len(f.Imports) != 3 {
		t.Fatalf("package %q imports %+v", f.Package, f.Imports)
	}
	if im := f.Imports[2]; im.Module != "com.acme.util" || im.Name != "slugify" || im.Alias != "slug" {
		t.Errorf("alias import %+v", im)
	}
	if !f.Imports[1].Star || f.Imports[1].Module != "com.acme.model" {
		t.Errorf("star import %+v", f.Imports[1])
	}
	tests := []struct{ name, wantPath, wantVia string }{
		{"Issue", "src/model/Issue.kt", "import"},         // not com.other.Issue
		{"slug", "src/util/Text.kt", "import"},            // alias
		{"Priority", "src/model/Issue.kt", "star-import"}, // star import
		{"Status", "src/model/Status.kt", "star-import"},
	}
	for _, tt := range tests {
		got := tab.Resolve(tt.name, "src/service/Service.kt", nil, 3)
		if len(got) == 0 || got[0].Def.Path != tt.wantPath || got[0].Via != tt.wantVia {
			t.Errorf("Resolve(%s) = %+v, want %s via %s", tt.name, got, tt.wantPath, tt.wantVia)
		}
	}
	iss := tab.Resolve("Issue", "src/service/Service.kt", nil, 1)[0].Def
	if iss.Signature != "data class Issue(val id: Long, val title: String)" || iss.Doc != "/** One issue. */" {
		t.Errorf("Issue def %+v", iss)
	}
}
