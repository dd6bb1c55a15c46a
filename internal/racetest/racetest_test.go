package racetest

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// root is the module's root, from this package's folder.
const root = "../.."

// makeVar returns the value of the Makefile's one-line variable name (NAME := value).
func makeVar(t *testing.T, name string) string {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	re := regexp.MustCompile(`^` + name + `\s*[:?]?=\s*(.*)$`)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			return strings.TrimSpace(m[1])
		}
	}
	t.Fatalf("Makefile: no variable %s", name)
	return ""
}

// goFiles calls fn for every Go file of the module but beam/ (its own module) and testdata.
func goFiles(t *testing.T, fn func(path string, f *ast.File, fset *token.FileSet)) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (d.Name() == "beam" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		fn(path, f, fset)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// pkgDir returns path's package folder as the Makefile names it ("./dataset", ".").
func pkgDir(t *testing.T, path string) string {
	rel, err := filepath.Rel(root, filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if rel == "." {
		return "."
	}
	return "./" + filepath.ToSlash(rel)
}

// racetestName returns the name f imports this package under ("racetest", a rename, or "."
// for a dot import), or "" when f does not import it.
func racetestName(f *ast.File) string {
	for _, im := range f.Imports {
		if strings.Trim(im.Path.Value, "`\"") != "github.com/repoctx/repoctx/internal/racetest" {
			continue
		}
		if im.Name != nil {
			return im.Name.Name
		}
		return "racetest"
	}
	return ""
}

// TestPlainTestsInStep checks that every test calling Skip or reading Enabled is in PLAIN_TESTS,
// with its package in PLAIN_PKGS, and that PLAIN_TESTS names no other test: a test skipped under
// -race and missing from the plain pass would never run (whole) in make test.
func TestPlainTestsInStep(t *testing.T) {
	names := map[string]bool{}
	for _, n := range strings.Split(makeVar(t, "PLAIN_TESTS"), "|") {
		names[n] = true
	}
	pkgs := strings.Fields(makeVar(t, "PLAIN_PKGS"))
	skipping := map[string]bool{}
	goFiles(t, func(path string, f *ast.File, fset *token.FileSet) {
		local := racetestName(f)
		if local == "" {
			return
		}
		// uses reports whether n reads racetest.Skip or racetest.Enabled, by any import name.
		uses := func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				x, ok := n.X.(*ast.Ident)
				return ok && x.Name == local && (n.Sel.Name == "Skip" || n.Sel.Name == "Enabled")
			case *ast.Ident:
				return local == "." && (n.Name == "Skip" || n.Name == "Enabled")
			}
			return false
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			isTest := strings.HasPrefix(fd.Name.Name, "Test") && fd.Recv == nil
			var visit func(n ast.Node) bool
			visit = func(n ast.Node) bool {
				// A test that calls Skip, or reads Enabled to do less under -race, runs whole in the plain pass.
				if !uses(n) {
					if sel, ok := n.(*ast.SelectorExpr); ok {
						ast.Inspect(sel.X, visit) // not sel.Sel: t.Skip is no use of a dot import
						return false
					}
					return true
				}
				pos := fset.Position(n.Pos())
				if !isTest {
					// Only a test function can be named in PLAIN_TESTS: a helper's (or a fuzz
					// target's) skip would go unchecked, and its callers unrun.
					t.Errorf("%s:%d: %s uses racetest outside a Test function: call racetest.Skip from the test itself", pos.Filename, pos.Line, fd.Name.Name)
					return true
				}
				skipping[fd.Name.Name] = true
				if !names[fd.Name.Name] {
					t.Errorf("%s:%d: %s skips itself or does less under -race but PLAIN_TESTS does not name it", pos.Filename, pos.Line, fd.Name.Name)
				}
				if dir := pkgDir(t, path); !slices.Contains(pkgs, dir) {
					t.Errorf("%s:%d: %s skips itself or does less under -race but PLAIN_PKGS does not name %s", pos.Filename, pos.Line, fd.Name.Name, dir)
				}
				return true
			}
			ast.Inspect(fd.Body, visit)
		}
	})
	for n := range names {
		if !skipping[n] {
			t.Errorf("PLAIN_TESTS names %s, which neither calls racetest.Skip nor reads racetest.Enabled (it runs under -race already, or does not exist)", n)
		}
	}
}

// TestSerialPackagesStartNoGoroutine checks that no file of SERIAL_PKGS, which the race pass
// leaves out, has a go statement or a parallel test.
func TestSerialPackagesStartNoGoroutine(t *testing.T) {
	var serial []string
	for _, p := range strings.Fields(makeVar(t, "SERIAL_PKGS")) {
		serial = append(serial, strings.TrimSuffix(p, "/..."))
	}
	in := func(dir string) bool {
		for _, s := range serial {
			if dir == s || (s != "." && strings.HasPrefix(dir, s+"/")) {
				return true
			}
		}
		return false
	}
	seen := 0
	goFiles(t, func(path string, f *ast.File, fset *token.FileSet) {
		if !in(pkgDir(t, path)) {
			return
		}
		seen++
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GoStmt:
				pos := fset.Position(n.Pos())
				t.Errorf("%s:%d: go statement in SERIAL_PKGS, which the race pass leaves out", pos.Filename, pos.Line)
			case *ast.SelectorExpr:
				switch n.Sel.Name {
				case "Parallel":
					pos := fset.Position(n.Pos())
					t.Errorf("%s:%d: parallel test in SERIAL_PKGS, which the race pass leaves out", pos.Filename, pos.Line)
				case "Go", "AfterFunc": // sync.WaitGroup.Go, errgroup.Group.Go, time.AfterFunc
					pos := fset.Position(n.Pos())
					t.Errorf("%s:%d: %s starts a goroutine in SERIAL_PKGS, which the race pass leaves out", pos.Filename, pos.Line, n.Sel.Name)
				}
			}
			return true
		})
	})
	if seen == 0 {
		t.Fatal("SERIAL_PKGS matched no Go file")
	}
}
