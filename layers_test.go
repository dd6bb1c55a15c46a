package repoctx_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// layers gives every package of the module its layer: a package may import only
// packages of lower layers (test files may import anything). The order is the one the
// layout in docs/architecture.md documents:
//
//	repoctx ← internal helpers, grammars/kotlin2, languages/internal/lex ← grammars, tokens, store ←
//	languages/<name> ← languages ← chunker, complete ← symbols, retrieve, snapshot ← retrieve/hugot,
//	preprocess, crossrepo ← index ← assemble ← batch ← dataset, serve ← dataset/fromgit, eval ← cmd/repoctx, scripts/tune,
//	scripts/growthplot, scripts/novelsplit, examples/library; beam/pipeline (module beam) ← beam/cmd/repoctx-beam
//
// store keeps records on disk and knows nothing of what they hold; snapshot reads
// repository revisions (folders, zips, memory) and walks folders, keeping what a walk
// learnt in the store; preprocess walks and chunks files and folders into chunk
// records (the library behind `repoctx chunk`); index chunks, embeds and searches snapshots over the store.
var layers = map[string]int{
	".":                        0,
	"internal/atomicfile":      1,
	"internal/topk":            1,
	"internal/pathsafe":        1,
	"internal/inputfile":       1,
	"internal/parallel":        1, // a loop split into ranges on goroutines (retrieve, index)
	"grammars/kotlin2":         1, // the kotlin2 build's Kotlin grammar (cgo)
	"grammars/kotlin2/install": 2, // build tool: installs that grammar's C source
	"grammars":                 2,
	"languages/internal/lex":   1, // byte scanning shared by the rules packages below
	"languages/c":              3, // C and C++ text rules (rewrites)
	"languages/csharp":         3,
	"languages/kotlin":         3, // Kotlin rewrites and text outline
	"languages/ruby":           3,
	"languages/rust":           3,
	"languages/swift":          3,
	"languages":                4, // attaches those rules to the grammars specs
	"tokens":                   2,
	"store":                    2, // on-disk records, locks, GC
	"internal/benchrepo":       5, // benchmark helper, imported by test files only
	"internal/faultfs":         1, // tmpfs helper of fault tests, imported by test files only
	"internal/racetest":        1, // tells a test it runs under -race, imported by test files only
	"internal/ziptest":         1, // writes zips of snapshot folders, imported by test files only
	"chunker":                  5,
	"complete":                 5, // model endpoints: needs only the root; eval and the CLI use it
	"symbols":                  6,
	"retrieve":                 6,
	"snapshot":                 6, // sources, snapshots, the walker
	"retrieve/hugot":           7,
	"preprocess":               7, // walk + chunk into chunk records (text, JSONL, Parquet), stats
	"crossrepo":                7, // bleve indexes of several repositories searched as one
	"index":                    8, // a repository's index and its snapshots' views
	"assemble":                 9,
	"batch":                    10,
	"serve":                    11,
	"dataset":                  11,
	"dataset/fromgit":          12,
	"eval":                     12,
	"cmd/repoctx":              13,
	"scripts/tune":             13, // tuning harness (a command): batch, dataset and eval
	"scripts/growthplot":       13, // growth.sh's report as a chart (a command)
	"scripts/novelsplit":       13, // novelrec split into code and prose identifiers (a command): dataset and eval
	"examples/library":         13, // the README's Go library example (a command)
	// The Beam pipelines: their own module (beam/go.mod), so that the library and the
	// CLI do not depend on Beam; they sit on top of the same layers.
	"beam/pipeline":         12, // preprocessing and batch predict as Beam pipelines
	"beam/cmd/repoctx-beam": 13, // their command
}

const module = "github.com/repoctx/repoctx"

// TestImportLayers fails on any import that goes up (or sideways) the layers, and on
// a package that has no layer yet (add it to the table and to docs/architecture.md).
func TestImportLayers(t *testing.T) {
	imports := map[string]map[string]bool{} // package dir -> project packages it imports
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && p != ".") {
			return fs.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(p))
		if imports[dir] == nil {
			imports[dir] = map[string]bool{}
		}
		for _, im := range f.Imports {
			path := strings.Trim(im.Path.Value, `"`)
			if path == module {
				imports[dir]["."] = true
			} else if rest, ok := strings.CutPrefix(path, module+"/"); ok {
				imports[dir][rest] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	dirs := make([]string, 0, len(imports))
	for d := range imports {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		from, ok := layers[dir]
		if !ok {
			t.Errorf("package %s has no layer: add it to the layers table (and to docs/architecture.md)", dir)
			continue
		}
		for to := range imports[dir] {
			l, ok := layers[to]
			if !ok {
				t.Errorf("%s imports %s, which has no layer", dir, to)
				continue
			}
			if l >= from {
				t.Errorf("%s (layer %d) imports %s (layer %d): imports must go down the layers", dir, from, to, l)
			}
		}
	}
}
