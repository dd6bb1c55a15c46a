package index

import (
	"context"
	"errors"
	"testing"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/retrieve"
	"github.com/repoctx/repoctx/snapshot"
)

// TestOpenLanguages: Options.Languages restricts the index and the symbol table to
// those languages' files (and so the cache key); an unknown language is an
// option error naming --langs.
func TestOpenLanguages(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"a/App.kt": "package a\n\nfun app() = 1\n", "a/Lib.java": "package a;\nclass Lib {}\n",
		"s/tool.py": "def tool():\n    pass\n", "s/use.py": "from s.tool import tool\n", "w/site.js": "function site() {}\n",
	})
	snap, err := snapshot.OpenDir(dir, snapshot.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	open := func(langs ...string) (*View, error) {
		return openView(context.Background(), snap, t.TempDir(), "", Options{Dense: retrieve.DenseNone, Symbols: true, Languages: langs})
	}
	for _, c := range []struct {
		langs []string
		files int
	}{{nil, 5}, {[]string{"java", "kotlin"}, 2}, {[]string{"python"}, 2}} {
		r, err := open(c.langs...)
		if err != nil {
			t.Fatal(err)
		}
		paths := map[string]bool{}
		for _, ch := range r.Retriever().Chunks() {
			paths[ch.Path] = true
		}
		if r.Stats().Files != c.files || len(paths) != c.files {
			t.Errorf("Languages %v: %d files, chunks of %d, want %d", c.langs, r.Stats().Files, len(paths), c.files)
		}
		if got := len(r.Symbols().Resolve("tool", "s/use.py", nil, 1)); (c.langs == nil || c.langs[0] == "python") != (got == 1) {
			t.Errorf("Languages %v: the Python definition resolved %d times", c.langs, got)
		}
		r.Close()
	}
	if _, err := open("cobol"); !errors.As(err, new(*repoctx.OptionError)) {
		t.Errorf("unknown language: %v, want an OptionError", err)
	}
}
