package index_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/assemble"
	"github.com/repoctx/repoctx/index"
	"github.com/repoctx/repoctx/snapshot"
	"github.com/repoctx/repoctx/store"
)

// Index a small Go repository and compose the context for a completion point in it.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "repoctx-example-")
	defer os.RemoveAll(dir)
	repoDir, cacheDir := filepath.Join(dir, "shop"), filepath.Join(dir, "cache")
	files := map[string]string{
		"cart/cart.go": "package cart\n\n// Item is one line of a cart.\ntype Item struct {\n\tName  string\n\tPrice int // cents\n\tQty   int\n}\n\n// Total returns the cart's total in cents.\nfunc Total(items []Item) int {\n\tt := 0\n\tfor _, it := range items {\n\t\tt += it.Price * it.Qty\n\t}\n\treturn t\n}\n",
		"main.go":      "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/shop/cart\"\n)\n\nfunc main() {\n\titems := []cart.Item{{Name: \"tea\", Price: 350, Qty: 2}}\n\tfmt.Println(cart.Total(items))\n}\n",
	}
	for p, text := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(repoDir, p)), 0o755)
		os.WriteFile(filepath.Join(repoDir, p), []byte(text), 0o644)
	}

	// The folder as a snapshot of the files the walker lets through (.gitignore applies).
	snap, _, err := snapshot.OpenFolder(ctx, repoDir, snapshot.WalkOptions{})
	if err != nil {
		log.Fatal(err)
	}
	st := store.Open(cacheDir) // default: store.DefaultCacheDir()
	defer st.Close()
	ix, err := index.Open(st, index.FolderRepo(repoDir), index.DefaultOptions())
	if err != nil {
		log.Fatal(err)
	}
	defer ix.Close()
	view, err := ix.View(ctx, snap) // chunked once; later views and runs reuse the store
	if err != nil {
		log.Fatal(err)
	}
	defer view.Close()

	hole := repoctx.Hole{
		Path:   "report.go",
		Prefix: "package main\n\nimport \"example.com/shop/cart\"\n\n// Subtotal returns the total of the cart's items in cents.\nfunc Subtotal(items []cart.Item) int {\n\treturn cart.",
		Suffix: "\n}\n",
	}
	c, err := assemble.Compose(ctx, view, hole, assemble.DefaultOptions())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(view.Stats().Files, "files,", view.Stats().Chunks, "chunks")
	fmt.Print(c.Text) // "<|file_sep|>path\ncontent" parts, the most relevant last
	// Output:
	// 2 files, 5 chunks
	// <|file_sep|>cart/cart.go
	// package cart
	//
	// // Item is one line of a cart.
	// type Item struct {
	// 	Name  string
	// 	Price int // cents
	// 	Qty   int
	// }
	//
	// // Total returns the cart's total in cents.
	// func Total(items []Item) int {
	// 	t := 0
	// 	for _, it := range items {
	// 		t += it.Price * it.Qty
	// 	}
	// 	return t
	// }
	// <|file_sep|>main.go
	// package main
	//
	// import (
	// 	"fmt"
	//
	// 	"example.com/shop/cart"
	// )
	//
	// func main() {
	// 	items := []cart.Item{{Name: "tea", Price: 350, Qty: 2}}
	// 	fmt.Println(cart.Total(items))
	// }
}
