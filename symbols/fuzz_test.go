package symbols

import (
	"testing"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/grammars"
)

// FuzzResolveText: reading uses and a scope from any text, at any cursor, and
// resolving the uses never panics.
func FuzzResolveText(f *testing.F) {
	f.Add("kotlin", "class A(val x: Foo) : B() {\n    fun f(a: Int) {\n        val y = a.b(1).c\n        y?.d!!.e()\n", "    }\n}\n")
	f.Add("python", "class A(B):\n    def f(self, x: 'Optional[Foo]' = None):\n        y = super().g(\n        self.z = x.w()[0].v\n", "    return y\n")
	f.Add("kotlin", "import a.b.C.Companion.d as e\nval q = \"s\".f()::g\n{ (a, b) -> ", ")")
	f.Add("python", "from . import (x as y,\nimport a.b as c\nwith X() as w:\n    lambda p, q: p.", "r(")
	f.Add("kotlin", "import com.acme.model.Repo\nfun f(r: Repo) {\n    r.store.flushAll()\n    Repo.create().audit()\n    super.find(1)\n", "}")
	f.Add("python", "from shop.store import Store\nimport shop.iters as it\nclass M(Store):\n    def r(self):\n        self.audit()\n        it.forEach(Store.open('x').find(1))\n", "")
	e := NewExtractor(0)
	var files []*File
	for _, repo := range []map[string]string{ktRepoTypes, pyRepoTypes, ktOkio, pyForEach} {
		for p, src := range repo {
			cf, err := chunker.Decode(p, []byte(src), 0)
			if err != nil {
				f.Fatal(err)
			}
			sf, err := e.Extract(cf)
			if err != nil {
				f.Fatal(err)
			}
			files = append(files, sf)
		}
	}
	e.Close()
	tab := NewTable(files)
	f.Fuzz(func(t *testing.T, lang, before, after string) {
		if lang != "kotlin" {
			lang = "python"
		}
		spec := grammars.Lookup(lang)
		path := map[string]string{"kotlin": "src/model/app/A.kt", "python": "shop/app.py"}[lang]
		site := Site{From: path, Scope: NewScope(lang, before+after, len(before))}
		for _, u := range Uses(before, after, spec) {
			tab.ResolveUse(u, site, 2)
			for _, q := range u.Qualifiers {
				site.Scope.TypeOf(q)
			}
		}
		NewScope(lang, before+after, -1)
		NewScope(lang, before+after, len(before)+len(after)+5)
	})
}
