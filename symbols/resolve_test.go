package symbols

import (
	"fmt"
	"strings"
	"testing"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/grammars"
)

// resolveIn resolves name as the completion file at path with text prefix+suffix
// (cursor between them) uses it, the way the definitions source does: the uses of
// the text, the current text's symbols and imports, its scope.
func resolveIn(t *testing.T, tab *Table, path, prefix, suffix, name string) []Candidate {
	t.Helper()
	u, site := useAt(t, path, prefix, suffix, name)
	return tab.ResolveUse(u, site, 3)
}

// useAt returns the use of name in the text prefix+suffix of the file at path, and
// its site: the current text's symbols and imports, its scope at the cursor (between
// prefix and suffix). The test fails when name is not among the text's uses.
func useAt(t *testing.T, path, prefix, suffix, name string) (Use, Site) {
	t.Helper()
	e := NewExtractor(0)
	defer e.Close()
	f, err := chunker.Decode(path, []byte(prefix+suffix), 0)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := e.Extract(f)
	if err != nil {
		t.Fatal(err)
	}
	site := Site{From: path, Imports: cur.Imports, Current: cur, Scope: NewScope(cur.Lang, prefix+suffix, len(prefix))}
	for _, u := range Uses(prefix, suffix, grammars.ForPath(path)) {
		if u.Name == name {
			return u, site
		}
	}
	t.Fatalf("%s: %q is not among the uses of the text", path, name)
	return Use{}, Site{}
}

// where renders candidates as "path:line(via)" for messages and comparisons.
func where(cs []Candidate) string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s:%d(%s)", c.Def.Path, c.Def.StartLine, c.Via))
	}
	return strings.Join(out, " ")
}

var ktForEach = map[string]string{
	"src/main/kotlin/com/acme/util/Iter.kt": `package com.acme.util

/** Calls action on every item, in order, skipping nulls. */
fun <T> Iterable<T?>.forEach(action: (T) -> Unit) {
    for (e in this) if (e != null) action(e)
}
`,
	// A test helper of the same name in the completion file's own package.
	"src/test/kotlin/com/acme/app/TestHelpers.kt": `package com.acme.app

fun forEach(times: Int, block: () -> Unit) = repeat(times) { block() }

fun sampleIssue() = Issue(1)
`,
	"src/main/kotlin/com/acme/app/Issue.kt": `package com.acme.app

class Issue(val id: Long)
`,
}

// TestForEachImportedKotlin: forEach resolves to the imported definition, not to the
// test helper of the same name in the same package; without the import it is the
// standard library's and resolves to nothing; a test helper is not offered to main
// code but is to test code.
func TestForEachImportedKotlin(t *testing.T) {
	tab := extractAll(t, ktForEach)
	pre := "package com.acme.app\n\nimport com.acme.util.forEach\n\nfun show(items: List<Issue?>) {\n    items.forEach { println(it) }\n    "
	got := resolveIn(t, tab, "src/main/kotlin/com/acme/app/Show.kt", pre, "\n}\n", "forEach")
	if where(got) != "src/main/kotlin/com/acme/util/Iter.kt:4(import)" {
		t.Errorf("imported forEach: %s", where(got))
	}
	star := strings.Replace(pre, "import com.acme.util.forEach", "import com.acme.util.*", 1)
	got = resolveIn(t, tab, "src/main/kotlin/com/acme/app/Show.kt", star, "\n}\n", "forEach")
	if where(got) != "src/main/kotlin/com/acme/util/Iter.kt:4(star-import)" {
		t.Errorf("star-imported forEach: %s", where(got))
	}
	plain := strings.Replace(pre, "import com.acme.util.forEach\n", "", 1)
	if got := resolveIn(t, tab, "src/main/kotlin/com/acme/app/Show.kt", plain, "\n}\n", "forEach"); len(got) != 0 {
		t.Errorf("stdlib forEach (no import) resolved to %s", where(got))
	}
	use := "package com.acme.app\n\nfun make() = sampleIssue()\n"
	if got := resolveIn(t, tab, "src/main/kotlin/com/acme/app/Make.kt", use, "", "sampleIssue"); len(got) != 0 {
		t.Errorf("main code got the test helper: %s", where(got))
	}
	if got := resolveIn(t, tab, "src/test/kotlin/com/acme/app/MakeTest.kt", use, "", "sampleIssue"); where(got) != "src/test/kotlin/com/acme/app/TestHelpers.kt:5(same-package)" {
		t.Errorf("test code: sampleIssue resolved to %s", where(got))
	}
}

var pyForEach = map[string]string{
	"shop/__init__.py": "",
	"shop/iters.py": `def forEach(items, fn):
    """Call fn on every item."""
    for x in items:
        fn(x)
`,
	"shop/helpers.py": "def forEach(fn):\n    return fn\n",
	"tests/helpers.py": `def forEach(fn):
    pass
`,
}

// TestForEachImportedPython: the Python counterpart, with `from m import name`,
// `import m as alias` (alias.name) and a bare use without an import (unresolved: a
// same-named helper elsewhere is not what the file calls).
func TestForEachImportedPython(t *testing.T) {
	tab := extractAll(t, pyForEach)
	for _, c := range []struct{ prefix, want string }{
		{"from shop.iters import forEach\n\n\ndef run(xs):\n    forEach(xs, print)\n", "shop/iters.py:1(import)"},
		{"from .iters import forEach as each\n\n\ndef run(xs):\n    each(xs, print)\n", "shop/iters.py:1(import)"},
		{"import shop.iters as it\n\n\ndef run(xs):\n    it.forEach(xs, print)\n", "shop/iters.py:1(module)"},
		{"import shop.iters\n\n\ndef run(xs):\n    shop.iters.forEach(xs, print)\n", "shop/iters.py:1(module)"},
		{"from shop import iters\n\n\ndef run(xs):\n    iters.forEach(xs, print)\n", "shop/iters.py:1(module)"},
		{"def run(xs):\n    forEach(xs, print)\n", ""},
	} {
		name := "forEach"
		if strings.Contains(c.prefix, " as each") {
			name = "each"
		}
		if got := resolveIn(t, tab, "shop/app.py", c.prefix, "", name); where(got) != c.want {
			t.Errorf("%q: %s, want %q", c.prefix, where(got), c.want)
		}
	}
}

var ktRepoTypes = map[string]string{
	"src/model/Repo.kt": `package com.acme.model

open class Base {
    fun audit(): String = "ok"
}

class Repo : Base() {
    fun find(id: Long): Issue? = null
    val store: Store = Store()

    companion object {
        fun create(): Repo = Repo()
    }
}

class Other {
    fun find(id: Long): Int = 0
    fun save(x: Int) {}
}
`,
	"src/model/Store.kt": `package com.acme.model

class Store {
    fun flushAll() {}
}
`,
	"src/model/Ext.kt": `package com.acme.model

fun Repo.purge() {}
fun Other.purge() {}
`,
	"src/model/Issue.kt": "package com.acme.model\n\nclass Issue(val id: Long)\n",
}

// TestReceiverTypeKotlin: x.foo resolves to the member foo of x's declared type (a
// property type, a constructor call, a parameter), of its supertypes, of a companion
// object for Type.foo, to extensions on the type, and through chains of declared
// member types; a receiver of a type outside the repository resolves to nothing.
func TestReceiverTypeKotlin(t *testing.T) {
	tab := extractAll(t, ktRepoTypes)
	head := "package com.acme.app\n\nimport com.acme.model.Repo\nimport com.acme.model.Other\nimport com.acme.model.purge\n\n"
	for _, c := range []struct{ body, name, want string }{
		{"class A {\n    private val repo: Repo = Repo.create()\n\n    fun f() {\n        repo.find(1)\n", "find", "src/model/Repo.kt:8(receiver)"},
		{"fun f() {\n    val o = Other()\n    o.find(1)\n", "find", "src/model/Repo.kt:17(receiver)"},
		{"fun f(r: Repo) {\n    r.audit()\n", "audit", "src/model/Repo.kt:4(receiver)"},
		{"fun f() {\n    Repo.create()\n", "create", "src/model/Repo.kt:12(receiver)"},
		{"fun f(r: Repo) {\n    r.purge()\n", "purge", "src/model/Ext.kt:3(receiver)"},
		{"fun f(r: Repo) {\n    r.store.flushAll()\n", "flushAll", "src/model/Store.kt:4(receiver)"},
		{"fun f(s: String) {\n    s.save(1)\n", "save", ""},                                              // String is not the repository's
		{"fun f(r: Repo) {\n    r.save(1)\n", "save", ""},                                                // Repo has no save: not Other.save
		{"fun f(x: Thing) {\n    x.find(1)\n", "find", ""},                                               // an unknown type: not a guess
		{"fun f() {\n    Repo.create().audit()\n", "audit", "src/model/Repo.kt:4(receiver)"},             // a method's return type
		{"fun f(xs: List<Int>) {\n    xs[0].save(1)\n", "save", "src/model/Repo.kt:18(imported-module)"}, // receiver unknown: a member in an imported package
	} {
		got := resolveIn(t, tab, "src/model/app/A.kt", head+c.body, "    }\n}\n", c.name)
		if where(got) != c.want {
			t.Errorf("%q: %s, want %q", c.body, where(got), c.want)
		}
	}
	// An extension is in scope only when imported (or declared in the same package).
	noImport := strings.Replace(head, "import com.acme.model.purge\n", "", 1)
	if got := resolveIn(t, tab, "src/model/app/A.kt", noImport+"fun f(r: Repo) {\n    r.purge()\n", "    }\n}\n", "purge"); len(got) != 0 {
		t.Errorf("an extension not imported: %s", where(got))
	}
	// Implicit this: a bare call inside a subclass is a member of its supertypes.
	sub := head + "import com.acme.model.Base\n\nclass Mine : Base() {\n    fun g() {\n        audit()\n"
	if got := resolveIn(t, tab, "src/app/Mine.kt", sub, "    }\n}\n", "audit"); where(got) != "src/model/Repo.kt:4(receiver)" {
		t.Errorf("implicit this: %s", where(got))
	}
}

var pyRepoTypes = map[string]string{
	"shop/__init__.py": "",
	"shop/store.py": `class Base:
    def audit(self):
        return "ok"


class Store(Base):
    def find(self, key):
        return None

    @classmethod
    def open(cls, url) -> "Store":
        return cls()


class Other:
    def find(self, key):
        return 1

    def save(self):
        pass
`,
	"shop/client.py": `from shop.store import Store


class Client:
    def __init__(self):
        self.store = Store()

    def session(self) -> Store:
        return self.store
`,
}

// TestReceiverTypePython: the Python counterpart: `x = Foo()`, a parameter `x: Foo`,
// `self.` inside a class (its bases included), `Foo.classmethod`, `self.attr` assigned
// a constructor call, a method's return annotation; str and unknown types resolve to
// nothing.
func TestReceiverTypePython(t *testing.T) {
	tab := extractAll(t, pyRepoTypes)
	head := "from shop.store import Store\nfrom shop.client import Client\n\n\n"
	for _, c := range []struct{ body, name, want string }{
		{"def f():\n    s = Store()\n    s.find(1)\n", "find", "shop/store.py:7(receiver)"},
		{"def f(s: Store, o):\n    s.find(1)\n", "find", "shop/store.py:7(receiver)"},
		{"def f(s: Optional[Store] = None):\n    s.audit()\n", "audit", "shop/store.py:2(receiver)"},
		{"def f():\n    Store.open('x')\n", "open", "shop/store.py:10(receiver)"},
		{"class Mine(Store):\n    def run(self):\n        self.audit()\n", "audit", "shop/store.py:2(receiver)"},
		{"class Mine(Store):\n    def __init__(self):\n        self.other = Other()\n\n    def run(self):\n        self.other.save()\n", "save", "shop/store.py:19(receiver)"},
		{"def f(c: Client):\n    c.session().audit()\n", "audit", "shop/store.py:2(receiver)"},
		{"def f(c):\n    c[0].audit()\n", "audit", "shop/store.py:2(same-dir)"}, // receiver unknown: a near member
		{"def f(c: Client):\n    c.session\n", "session", "shop/client.py:8(receiver)"},
		{"def f(name: str):\n    name.find('x')\n", "find", ""},
		{"def f(x: Thing):\n    x.save()\n", "save", ""},
	} {
		got := resolveIn(t, tab, "shop/app.py", head+c.body, "", c.name)
		if w := strings.ReplaceAll(where(got), " ", ","); w != c.want {
			t.Errorf("%q: %s, want %q", c.body, w, c.want)
		}
	}
}

// TestNoCrossLanguage: a Kotlin file never gets a Python definition and a Python file
// never a Kotlin one, even when a package name and a module path coincide, a member
// name is defined once in the repository, or a class name is shared.
func TestNoCrossLanguage(t *testing.T) {
	tab := extractAll(t, map[string]string{
		"shop/__init__.py":   "",
		"shop/models.py":     "class Invoice:\n    def total_cents(self):\n        return 1\n",
		"kt/Models.kt":       "package shop.models\n\nclass Receipt(val id: Long) {\n    fun printAll() {}\n}\n",
		"kt/Legacy.kt":       "package com.acme.legacy\n\nclass Invoice\n",
		"com/__init__.py":    "",
		"com/acme/legacy.py": "class Receipt:\n    pass\n",
	})
	kt := "package shop.app\n\nimport shop.models.Invoice\nimport shop.models.*\n\nfun f(x: Any) {\n    val i = Invoice()\n    x.total_cents()\n"
	for _, name := range []string{"Invoice", "total_cents"} {
		if got := resolveIn(t, tab, "kt/App.kt", kt, "}\n", name); len(got) != 0 {
			t.Errorf("Kotlin %s resolved to %s", name, where(got))
		}
	}
	py := "from com.acme.legacy import Invoice\nfrom shop.models import Receipt\n\n\ndef f(x):\n    Invoice()\n    Receipt()\n    x.printAll()\n"
	if got := resolveIn(t, tab, "app/main.py", py, "", "Receipt"); len(got) != 0 {
		t.Errorf("Python Receipt resolved to %s", where(got))
	}
	if got := resolveIn(t, tab, "app/main.py", py, "", "printAll"); len(got) != 0 {
		t.Errorf("Python printAll resolved to %s", where(got))
	}
	if got := resolveIn(t, tab, "app/main.py", py, "", "Invoice"); len(got) != 0 {
		t.Errorf("Python Invoice resolved to %s", where(got))
	}
	// The Kotlin class of the same package still resolves for Kotlin.
	if got := resolveIn(t, tab, "kt/App.kt", "package shop.app\n\nimport shop.models.Receipt\n\nfun g() = Receipt(1)\n", "", "Receipt"); where(got) != "kt/Models.kt:3(import)" {
		t.Errorf("Kotlin Receipt: %s", where(got))
	}
}

// TestKeywordsAndCommonNames: and/or/case are not resolved to the one-liners a
// repository defines under those names: Kotlin's infix and/or are the standard
// library's, a Kotlin top-level case() of another package needs an import, and in
// Python all three are keywords.
func TestKeywordsAndCommonNames(t *testing.T) {
	tab := extractAll(t, map[string]string{
		"src/okio/Util.kt": `package okio

internal inline infix fun Byte.and(other: Int): Int = toInt() and other
internal inline infix fun Int.or(other: Long): Long = toLong() or other
`,
		"src/sql/Case.kt":  "package org.sql\n\nfun case(value: Int) = value\n",
		"shop/__init__.py": "",
		"shop/ops.py":      "def case(x): return x\ndef and_(a, b): return a and b\n",
	})
	kt := "package okio\n\nfun mask(b: Byte, x: Int): Int {\n    val y = b and 0xff or x\n    return case(y)\n"
	for _, name := range []string{"and", "or", "case"} {
		if got := resolveIn(t, tab, "src/okio/Mask.kt", kt, "}\n", name); len(got) != 0 {
			t.Errorf("Kotlin %s resolved to %s", name, where(got))
		}
	}
	// Imported explicitly, the DSL function is what the code calls.
	imp := "package okio\n\nimport org.sql.case\n\nfun g(y: Int) = case(y)\n"
	if got := resolveIn(t, tab, "src/okio/G.kt", imp, "", "case"); where(got) != "src/sql/Case.kt:3(import)" {
		t.Errorf("imported case: %s", where(got))
	}
	py := "from shop import ops\n\n\ndef f(x, a, b):\n    match x:\n        case 1:\n            return a and b or x\n"
	uses := Uses(py, "", grammars.Lookup("python"))
	for _, u := range uses {
		if u.Name == "and" || u.Name == "or" || u.Name == "case" {
			t.Errorf("Python keyword %q is a use", u.Name)
		}
	}
	for _, name := range []string{"and", "or", "case"} {
		if got := tab.ResolveUse(Use{Name: name, Bare: true}, Site{From: "shop/main.py"}, 3); len(got) != 0 {
			t.Errorf("Python %s resolved to %s", name, where(got))
		}
	}
}

// TestUses: bare and qualified uses, receivers (chains, safe calls, super, call
// results), keyword arguments, strings and import paths.
func TestUses(t *testing.T) {
	before := "import a.b.Thing\nval sv = \"load(x)\"\nfoo(name = 1, other)\nsuper.start()\nrepo?.items!!.find(1)\n"
	after := "make(x).done()\nself.client.fetch(2)\nsuper().close()\nAb::build\n(a + b).plus(1)\n"
	got := map[string]string{}
	for _, u := range Uses(before, after, grammars.Lookup("kotlin")) {
		got[u.Name] = fmt.Sprintf("%v %s %d", u.Bare, strings.Join(u.Qualifiers, ","), u.Dist)
	}
	want := map[string]string{
		"Thing": "true  5", "foo": "true  3", "other": "true  3", "start": "false super 2",
		"repo": "true  1", "items": "false repo 1", "find": "false repo.items 1", "make": "true  0", "done": "false make() 0",
		"self": "true  1", "client": "false self 1", "fetch": "false self.client 1", "close": "false super 2", "build": "false Ab 3",
		"Ab": "true  3", "sv": "true  4", "plus": "false () 4",
	}
	for n, w := range want {
		if got[n] != w {
			t.Errorf("use %s: %q, want %q", n, got[n], w)
		}
	}
	for _, n := range []string{"load", "name", "a", "b"} {
		if g, ok := got[n]; ok {
			t.Errorf("%s is a use (%s)", n, g)
		}
	}
}

// TestScope: declared types, locals and the class around the cursor.
func TestScope(t *testing.T) {
	py := "class Shop:\n    def run(self, req: Request, n=3, *args, **kw):\n        cart = Cart()\n        for item, qty in cart:\n            total = item\n        "
	s := NewScope("python", py+"\n    def other(self):\n        pass\n", len(py))
	if s.Class() != "Shop" || s.TypeOf("req") != "Request" || s.TypeOf("cart") != "=Cart()" || s.TypeOf("self") != "Shop" {
		t.Errorf("python scope: class %q req %q cart %q", s.Class(), s.TypeOf("req"), s.TypeOf("cart"))
	}
	for _, n := range []string{"req", "n", "args", "kw", "cart", "item", "qty", "total"} {
		if !s.Local(n) {
			t.Errorf("python: %s not local", n)
		}
	}
	if !s.Param("req") || s.Param("cart") || s.Local("Shop") {
		t.Errorf("python params/locals wrong")
	}
	kt := "class Svc(private val repo: Repo) : Base() {\n    fun run(id: Long) {\n        val x = Thing(1)\n        list.forEach { item ->\n            "
	s = NewScope("kotlin", kt+"\n        }\n    }\n}\n", len(kt))
	if s.Class() != "Svc" || s.TypeOf("repo") != "Repo" || s.TypeOf("x") != "=Thing()" || s.TypeOf("Svc") != "" || s.TypeOf("this") != "Svc" {
		t.Errorf("kotlin scope: class %q repo %q x %q Svc %q", s.Class(), s.TypeOf("repo"), s.TypeOf("x"), s.TypeOf("Svc"))
	}
	for _, n := range []string{"id", "x", "item"} {
		if !s.Local(n) {
			t.Errorf("kotlin: %s not local", n)
		}
	}
}

// TestIsTestPath: test code by folder and file name.
func TestIsTestPath(t *testing.T) {
	for p, want := range map[string]bool{
		"src/test/kotlin/a/B.kt": true, "okio/src/jvmTest/kotlin/X.kt": true, "tests/conftest.py": true,
		"pkg/test_util.py": true, "pkg/util_test.py": true, "src/main/kotlin/FooTest.kt": true,
		"src/main/kotlin/Contest.kt": false, "pkg/latest.py": false, "src/main/kotlin/a/B.kt": false, "testing.py": false,
	} {
		if IsTestPath(p) != want {
			t.Errorf("IsTestPath(%s) = %v", p, !want)
		}
	}
}

var ktOkio = map[string]string{
	"okio/ByteString.kt": `package okio

open class ByteString(val data: ByteArray) {
    fun hex(): String = ""

    companion object {
        fun String.encodeUtf8(): ByteString = ByteString(toByteArray())
    }
}
`,
	"okio/Path.kt": `package okio

class Path(val name: String) {
    companion object {
        fun String.toPath(normalize: Boolean = false): Path = Path(this)
    }
}
`,
	"okio/FileSystem.kt": `package okio

abstract class FileSystem {
    abstract fun list(dir: Path): List<Path>
}
`,
	"okio/zip/ZipOkio.kt": `package okio.zip

import okio.FileSystem
import okio.Path

fun FileSystem.openZip(zipPath: Path): FileSystem = TODO()
`,
	"okio/other/Other.kt": "package okio.other\n\nclass Lister {\n    fun list(dir: String): List<String> = emptyList()\n}\n",
}

// TestKotlinNestedImportsAndChains: an import of a companion object's member
// (`import okio.ByteString.Companion.encodeUtf8`) resolves to it, also for a member
// use on a literal; a variable assigned a call chain gets the chain's type
// (`val z = fs.openZip(p)` is a FileSystem, so z.list is FileSystem.list).
func TestKotlinNestedImportsAndChains(t *testing.T) {
	tab := extractAll(t, ktOkio)
	pre := "package okio.test\n\nimport okio.ByteString.Companion.encodeUtf8\nimport okio.Path.Companion.toPath\nimport okio.FileSystem\nimport okio.zip.openZip\n\n" +
		"class ZipTest {\n    private val fileSystem: FileSystem = system()\n\n    fun t() {\n        val z = fileSystem.openZip(\"a.zip\".toPath())\n        z.list(\"/\".toPath())\n        \"x\".encodeUtf8().hex()\n"
	for _, c := range []struct{ name, want string }{
		{"encodeUtf8", "okio/ByteString.kt:7(import)"},
		{"toPath", "okio/Path.kt:5(import)"},
		{"openZip", "okio/zip/ZipOkio.kt:6(receiver)"}, // an extension on fileSystem's type
		{"list", "okio/FileSystem.kt:4(receiver)"},
		{"hex", "okio/ByteString.kt:4(receiver)"},
	} {
		if got := resolveIn(t, tab, "okio/test/ZipTest.kt", pre, "    }\n}\n", c.name); where(got) != c.want {
			t.Errorf("%s: %s, want %s", c.name, where(got), c.want)
		}
	}
}

// TestPythonQualifiedExternalType: a return type written with an external module
// (`-> httpx.Response`) is not the repository's class of the same last name.
func TestPythonQualifiedExternalType(t *testing.T) {
	tab := extractAll(t, map[string]string{
		"web/__init__.py":  "",
		"web/responses.py": "class Response:\n    def render(self):\n        return b''\n",
		"web/testclient.py": "import httpx\n\n\nclass TestClient:\n    def get(self, url) -> httpx.Response:\n        pass\n\n" +
			"    def page(self, url) -> \"Page\":\n        pass\n\n\nclass Page:\n    def render(self):\n        return ''\n",
	})
	pre := "from web.testclient import TestClient\n\n\ndef test_x(client: TestClient):\n    r = client.get('/')\n    r.render()\n    p = client.page('/')\n    p.render()\n"
	u := Use{Name: "render", Qualifiers: []string{"r"}}
	e := NewExtractor(0)
	defer e.Close()
	f, _ := chunker.Decode("tests/test_x.py", []byte(pre), 0)
	cur, _ := e.Extract(f)
	site := Site{From: "tests/test_x.py", Imports: cur.Imports, Current: cur, Scope: NewScope("python", pre, len(pre))}
	if got := tab.ResolveUse(u, site, 3); len(got) != 0 {
		t.Errorf("r.render (r: httpx.Response) resolved to %s", where(got))
	}
	u.Qualifiers = []string{"p"}
	if got := tab.ResolveUse(u, site, 3); where(got) != "web/testclient.py:13(receiver)" {
		t.Errorf("p.render (p: Page): %s", where(got))
	}
}
