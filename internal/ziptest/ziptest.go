// Package ziptest writes snapshot archives in the competition's layout for tests: a
// zip holding one inner zip per snapshot folder (snapshot.OpenZipSource reads them).
// Imported by test files only.
package ziptest

import (
	"archive/zip"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// WriteZipOfFolders packs each folder of dir into an inner zip named after it
// ("NAME.zip", its files at slash-separated paths relative to the folder) inside the
// zip out. Any error fails t.
func WriteZipOfFolders(t testing.TB, dir, out string) {
	t.Helper()
	var outer bytes.Buffer
	ow := zip.NewWriter(&outer)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		var inner bytes.Buffer
		iw := zip.NewWriter(&inner)
		root := filepath.Join(dir, e.Name())
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			w, err := iw.Create(filepath.ToSlash(rel))
			if err != nil {
				return err
			}
			_, err = w.Write(b)
			return err
		})
		if err == nil {
			err = iw.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
		w, err := ow.Create(e.Name() + ".zip")
		if err == nil {
			_, err = w.Write(inner.Bytes())
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := ow.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, outer.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
