package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/repoctx/repoctx/assemble"
	"github.com/repoctx/repoctx/crossrepo"
	"github.com/repoctx/repoctx/index"
	"github.com/repoctx/repoctx/symbols"
)

// folderName is what other repositories' parts of a folder dir are prefixed with:
// its base name.
func folderName(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	return filepath.Base(filepath.Clean(abs))
}

// syncedIndex opens the bleve index of view v of the repository whose records are
// named records, under name, and brings it up to date with the view's chunks. The
// index is closed when the command ends.
func syncedIndex(c *cli.Context, f *folder, name string, v *index.View) (*crossrepo.Index, error) {
	ix, err := crossrepo.Open(f.st, f.repo, name, "live")
	if err != nil {
		return nil, err
	}
	onClose(c, ix.Close)
	if _, err := ix.Sync(v.Retriever().Chunks()); err != nil {
		return nil, err
	}
	return ix, nil
}

// queryCrossRepo makes the cross-repository search of `query --with`: the bleve
// indexes of the queried folder f (view v) and of the folders dirs, each brought up
// to date with its current files, and with defs the folders' symbol tables for the
// definitions the queried file imports from them (assemble.CrossRepo.Definitions).
func queryCrossRepo(c *cli.Context, f *folder, v *index.View, dirs []string, defs bool) (*assemble.CrossRepo, error) {
	own := folderName(c.Args().First())
	ownIx, err := syncedIndex(c, f, own, v)
	if err != nil {
		return nil, err
	}
	all := []*crossrepo.Index{ownIx}
	var sources []assemble.DefSource
	seen := map[string]string{own: c.Args().First()}
	for _, dir := range dirs {
		name := folderName(dir)
		if prev, dup := seen[name]; dup {
			return nil, usagef("--with %s: its folder name %q is that of %s too; parts are named by folder", dir, name, prev)
		}
		seen[name] = dir
		of, err := openFolderAs(c, dir, "", defs, false, index.ViewsStoredOnRepeat)
		if err != nil {
			return nil, fmt.Errorf("--with %s: %w", dir, err)
		}
		ov, err := of.ix.View(c.Context, of.snap)
		if err != nil {
			return nil, fmt.Errorf("--with %s: %w", dir, err)
		}
		onClose(c, ov.Close)
		ix, err := syncedIndex(c, of, name, ov)
		if err != nil {
			return nil, fmt.Errorf("--with %s: %w", dir, err)
		}
		all = append(all, ix)
		if defs && ov.Symbols() != nil {
			sources = append(sources, assemble.DefSource{Repository: name, Symbols: ov.Symbols(), Text: ov.Retriever().FileText,
				Names: append([]string{name}, symbols.ImportNames(os.DirFS(dir))...)})
		}
	}
	a, err := crossrepo.NewAlias(all...)
	if err != nil {
		return nil, err
	}
	return &assemble.CrossRepo{Alias: a, Own: own, Definitions: sources}, nil
}
