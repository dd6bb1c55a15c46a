package kotlin2

import (
	"context"
	"testing"

	sitter "github.com/smacker/go-tree-sitter"
)

// TestParse parses a small file when the grammar is compiled in, and checks that the
// stub says it is not otherwise.
func TestParse(t *testing.T) {
	if !Available {
		if GetLanguage() != nil {
			t.Fatal("GetLanguage without the kotlin2 tag is not nil")
		}
		t.Skip("built without the kotlin2 tag")
	}
	p := sitter.NewParser()
	defer p.Close()
	p.SetLanguage(GetLanguage())
	tree, err := p.ParseCtx(context.Background(), nil, []byte("class A {\n  fun get() = 1\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	root := tree.RootNode()
	if root.Type() != "source_file" || root.HasError() {
		t.Fatalf("tree %s", root.String())
	}
}
