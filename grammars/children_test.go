package grammars

import (
	"os"
	"path/filepath"
	"testing"

	sitter "github.com/smacker/go-tree-sitter"
)

// TestChildrenMatchCursor: Children (one cgo call, nodes built by the layout of
// smacker's Node) lists, for every node of the chunker's fixture of each language
// and of a wide list, the same children as smacker's own tree cursor, and every
// accessor of each child answers the same as on the cursor's node.
func TestChildrenMatchCursor(t *testing.T) {
	if !mirrorOK {
		t.Fatal("nodeMirror does not have the size of sitter.Node: Children falls back to the cursor walk")
	}
	files, _ := filepath.Glob("../chunker/testdata/langs/*")
	ps := NewParsers(0)
	defer ps.Close()
	type input struct {
		spec *Spec
		text []byte
	}
	var inputs []input
	for _, f := range files {
		spec := ForPath(f)
		raw, err := os.ReadFile(f)
		if spec == nil || err != nil {
			continue
		}
		inputs = append(inputs, input{spec, raw})
	}
	inputs = append(inputs,
		input{Lookup("kotlin"), []byte("package a.b\n\nimport x.Y\n\n/** Doc. */\n@Ann\nclass C(val x: Int) : Y {\n    fun f(a: Int): Int = a + x\n    val p get() = 1\n    object O { fun g() {} }\n}\n")},
		input{Lookup("python"), []byte("import os\n\n@dec\nclass C:\n    def f(self, a):\n        return [a for a in os.sep]\n\ndef g(\n")})
	wide := []byte("x = [")
	for i := 0; i < 5000; i++ {
		wide = append(wide, "1, "...)
	}
	inputs = append(inputs, input{Lookup("python"), append(wide, "]\n"...)})
	if len(inputs) < 10 {
		t.Fatalf("only %d fixtures found", len(inputs))
	}
	for _, in := range inputs {
		tree, src, err := ps.Parse(in.spec, in.text)
		if err != nil {
			t.Fatal(err)
		}
		nodes := 0
		var walk func(n *sitter.Node)
		walk = func(n *sitter.Node) {
			got, want := Children(n), cursorChildren(n)
			withInfo, infos := ChildrenInfo(n)
			if len(withInfo) != len(want) || len(infos) != len(want) {
				t.Fatalf("%s: %s at %d: ChildrenInfo gives %d children and %d infos, the cursor %d", in.spec.Name, n.Type(), n.StartByte(), len(withInfo), len(infos), len(want))
			}
			for i, w := range want {
				wi := nodeInfo(w)
				if !withInfo[i].Equal(w) || infos[i] != wi || infos[i].IsError() != w.IsError() ||
					in.spec.TypeOfSymbol(withInfo[i], infos[i].Symbol) != in.spec.TypeOf(w) || StartByte(w) != int(w.StartByte()) {
					t.Fatalf("%s: child %d of %s at %d: ChildrenInfo %+v, the cursor's node %+v", in.spec.Name, i, n.Type(), n.StartByte(), infos[i], wi)
				}
			}
			if len(got) != len(want) {
				t.Fatalf("%s: %s at %d: %d children, the cursor %d", in.spec.Name, n.Type(), n.StartByte(), len(got), len(want))
			}
			for i, c := range got {
				w := want[i]
				nodes++
				if !c.Equal(w) || c.Symbol() != w.Symbol() || c.Type() != w.Type() ||
					c.StartByte() != w.StartByte() || c.EndByte() != w.EndByte() ||
					c.StartPoint() != w.StartPoint() || c.EndPoint() != w.EndPoint() ||
					c.IsNamed() != w.IsNamed() || c.IsError() != w.IsError() || c.IsMissing() != w.IsMissing() ||
					c.HasError() != w.HasError() || c.ChildCount() != w.ChildCount() ||
					c.Content(src) != w.Content(src) || !sameNode(c.Parent(), w.Parent()) {
					t.Fatalf("%s: child %d of %s at %d differs from the cursor's", in.spec.Name, i, n.Type(), n.StartByte())
				}
				if fc, fw := c.ChildByFieldName("name"), w.ChildByFieldName("name"); (fc == nil) != (fw == nil) || (fc != nil && !fc.Equal(fw)) {
					t.Fatalf("%s: child %d of %s: field name differs", in.spec.Name, i, n.Type())
				}
				walk(c)
			}
		}
		walk(tree.RootNode())
		tree.Close()
		if nodes == 0 {
			t.Fatalf("%s: no nodes", in.spec.Name)
		}
	}
}

// sameNode reports whether a and b are the same node or both nil. (Parent is
// compared with the cursor node's own Parent, not with the node walked: tree-sitter's
// ts_node_parent answers another node for some zero-width MISSING nodes of C/C++.)
func sameNode(a, b *sitter.Node) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(b)
}
