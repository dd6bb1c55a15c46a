// Command library is the README's Go library example: it opens a folder, indexes
// it and prints the context of a hole halfway through one of its files.
//
//	go run ./examples/library path/to/repo
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/assemble"
	"github.com/repoctx/repoctx/index"
	"github.com/repoctx/repoctx/snapshot"
	"github.com/repoctx/repoctx/store"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: library REPO_DIR")
	}
	dir := os.Args[1]
	ctx := context.Background()
	snap, _, err := snapshot.OpenFolder(ctx, dir, snapshot.WalkOptions{}) // .gitignore applies
	if err != nil {
		log.Fatal(err)
	}
	st := store.Open(store.DefaultCacheDir()) // chunks and vectors, reused by later runs
	defer st.Close()
	ix, err := index.Open(st, index.FolderRepo(dir), index.DefaultOptions())
	if err != nil {
		log.Fatal(err)
	}
	defer ix.Close()
	view, err := ix.View(ctx, snap) // the index's view of this snapshot
	if err != nil {
		log.Fatal(err)
	}
	defer view.Close()

	// A hole halfway through one of the repository's files.
	paths := snap.Paths()
	if len(paths) == 0 {
		log.Fatal("no source files in ", dir)
	}
	path := paths[len(paths)/2]
	text, err := snap.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	lines := strings.SplitAfter(string(text), "\n")
	half := len(lines) / 2
	hole := repoctx.Hole{Path: path, Prefix: strings.Join(lines[:half], ""), Suffix: strings.Join(lines[half+1:], "")}

	c, err := assemble.Compose(ctx, view, hole, assemble.DefaultOptions())
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range c.Parts { // where each part comes from and why, least relevant first
		fmt.Printf("%s:%d-%d %v\n", p.Path, p.StartLine, p.EndLine, p.Why)
	}
	fmt.Print(c.Text) // the context itself
}
