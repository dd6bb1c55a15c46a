package grammars

import (
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
)

// Import is one imported name (or module) of a file.
type Import struct {
	// Module is the dotted module or package path: "a.b.c" (Python), "com.acme.model"
	// (Kotlin). It is "" for Python's `from . import x`.
	Module string `json:"module,omitempty"`
	// Level is the number of leading dots of a Python relative import; 0 = absolute.
	Level int `json:"level,omitempty"`
	// Name is the imported name ("Issue", "load"), or "" when the module itself is
	// imported (`import a.b.c`).
	Name string `json:"name,omitempty"`
	// Alias is the local name given with `as`, or "".
	Alias string `json:"alias,omitempty"`
	// Star reports a wildcard import (`from x import *`, `import a.b.*`).
	Star bool `json:"star,omitempty"`
	// Line is the 1-based line of the import statement.
	Line int `json:"line"`
}

// Local returns the name the import binds in the importing file: the alias, else the
// name, else the module's first component (Python's `import a.b` binds `a`).
func (im Import) Local() string {
	switch {
	case im.Alias != "":
		return im.Alias
	case im.Name != "":
		return im.Name
	}
	if i := strings.IndexByte(im.Module, '.'); i >= 0 {
		return im.Module[:i]
	}
	return im.Module
}

func text(n *sitter.Node, src []byte) string {
	if n == nil {
		return ""
	}
	return n.Content(src)
}

func line(n *sitter.Node) int { return int(n.StartPoint().Row) + 1 }

// pythonImports reads import_statement and import_from_statement nodes anywhere at
// module level and in function/class bodies (one level of nesting).
func pythonImports(root *sitter.Node, src []byte) (string, []Import) {
	var out []Import
	var walk func(n *sitter.Node, depth int)
	walk = func(n *sitter.Node, depth int) {
		for _, c := range Children(n) {
			switch c.Type() {
			case "import_statement":
				for _, k := range Children(c) {
					switch k.Type() {
					case "dotted_name":
						out = append(out, Import{Module: text(k, src), Line: line(c)})
					case "aliased_import":
						out = append(out, Import{Module: text(k.ChildByFieldName("name"), src), Alias: text(k.ChildByFieldName("alias"), src), Line: line(c)})
					}
				}
			case "import_from_statement":
				base := Import{Line: line(c)}
				mod := c.ChildByFieldName("module_name")
				if mod != nil && mod.Type() == "relative_import" {
					for _, k := range Children(mod) {
						switch k.Type() {
						case "import_prefix":
							base.Level = strings.Count(text(k, src), ".")
						case "dotted_name":
							base.Module = text(k, src)
						}
					}
				} else {
					base.Module = text(mod, src)
				}
				seenImport := false
				for _, k := range Children(c) {
					if k.Type() == "import" {
						seenImport = true
						continue
					}
					if !seenImport {
						continue
					}
					im := base
					switch k.Type() {
					case "dotted_name":
						im.Name = text(k, src)
					case "aliased_import":
						im.Name, im.Alias = text(k.ChildByFieldName("name"), src), text(k.ChildByFieldName("alias"), src)
					case "wildcard_import":
						im.Star = true
					default:
						continue
					}
					out = append(out, im)
				}
			case "function_definition", "class_definition", "decorated_definition", "block", "if_statement", "try_statement":
				if depth < 3 {
					walk(c, depth+1)
				}
			}
		}
	}
	walk(root, 0)
	return "", out
}

// kotlinImports reads the package header and import headers, in both Kotlin grammars'
// shapes: fwcd's import_header (identifier, wildcard_import, import_alias) and the
// newer grammar's import (qualified_identifier or identifier, an anonymous ".*"
// token, then the alias identifier after "as").
func kotlinImports(root *sitter.Node, src []byte) (string, []Import) {
	pkg := ""
	var out []Import
	var headers []*sitter.Node
	for _, c := range Children(root) {
		switch c.Type() {
		case "package_header":
			for _, k := range Children(c) {
				if k.Type() == "identifier" || k.Type() == "qualified_identifier" {
					pkg = text(k, src)
				}
			}
		case "import_list":
			headers = append(headers, Children(c)...)
		case "import_header", "import":
			headers = append(headers, c)
		}
	}
	for _, h := range headers {
		if h.Type() != "import_header" && h.Type() != "import" {
			continue
		}
		im := Import{Line: line(h)}
		path, seenPath := "", false
		for _, k := range Children(h) {
			switch k.Type() {
			case "identifier", "qualified_identifier":
				if seenPath { // the newer grammar's alias
					im.Alias = text(k, src)
				} else {
					path, seenPath = text(k, src), true
				}
			case "wildcard_import":
				im.Star = true
			case "*":
				if seenPath {
					im.Star = true
				}
			case "import_alias":
				for _, a := range Children(k) {
					if a.Type() == "type_identifier" || a.Type() == "simple_identifier" {
						im.Alias = text(a, src)
					}
				}
			}
		}
		path = strings.Join(strings.Fields(path), "")
		if im.Star {
			im.Module = path
		} else if i := strings.LastIndexByte(path, '.'); i >= 0 {
			im.Module, im.Name = path[:i], path[i+1:]
		} else {
			im.Name = path
		}
		out = append(out, im)
	}
	return pkg, out
}
