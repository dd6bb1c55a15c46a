package pipeline

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"context"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

func TestArchiveName(t *testing.T) {
	for in, want := range map[string]string{"a/b/repo.zip": "repo", "x.tar.gz": "x", "x.TGZ": "x", "y.tar": "y",
		"r.v1.bundle": "r.v1", "dir": "", ".zip": "", "x.gz": ""} {
		got, ok := ArchiveName(in)
		if got != want || ok != (want != "") {
			t.Errorf("ArchiveName(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

// archiveFiles lists the regular files under dir as slash paths, with contents.
func archiveFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func writeZip(t *testing.T, out string, files map[string][]byte) {
	t.Helper()
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for p, b := range files {
		w, err := zw.Create(p)
		if err == nil {
			_, err = w.Write(b)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func writeTarGz(t *testing.T, out string, files map[string][]byte) {
	t.Helper()
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	gw := gzip.NewWriter(f)
	tw := tar.NewWriter(gw)
	if err := tw.WriteHeader(&tar.Header{Name: "app/", Typeflag: tar.TypeDir, Mode: 0o755}); err != nil {
		t.Fatal(err)
	}
	for p, b := range files {
		if err := tw.WriteHeader(&tar.Header{Name: p, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(b))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []io.Closer{tw, gw, f} {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// writeBundle makes the git bundle out of a repository with one commit of every file
// under dir (ignored ones too), with the git command; without git it reports false.
func writeBundle(t *testing.T, out, dir string) bool {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Log("no git command: the bundle input is not tested")
		return false
	}
	work := filepath.Join(t.TempDir(), "work")
	if err := os.CopyFS(work, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A", "-f", "."},
		{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", "commit", "-q", "-m", "x"},
		{"bundle", "create", out, "HEAD"}} {
		cmd := exec.Command("git", append([]string{"-C", work}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return true
}

// TestPreprocessArchives runs one repository given as a folder, a zip, a tar.gz
// and (with the git command) a git bundle: every input gives the same rows.
func TestPreprocessArchives(t *testing.T) {
	folder := threeRepos(t)[0] // has a .gitignore and an ignored file
	files := archiveFiles(t, folder.Path)
	root := t.TempDir()
	zipPath, tgzPath := filepath.Join(root, "z.zip"), filepath.Join(root, "t.tar.gz")
	writeZip(t, zipPath, files)
	writeTarGz(t, tgzPath, files)
	repos := []RepoSpec{folder, {Index: 1, Name: "z", Path: zipPath}, {Index: 2, Name: "t", Path: tgzPath}}
	if bundle := filepath.Join(root, "b.bundle"); writeBundle(t, bundle, folder.Path) {
		repos = append(repos, RepoSpec{Index: 3, Name: "b", Path: bundle})
	}
	cfg := PreprocessConfig{Repos: repos, Chunk: DefaultChunkOptions(), OutDir: t.TempDir()}
	if _, err := Run(context.Background(), "prism", func(s beam.Scope) error { return Preprocess(s, cfg) }); err != nil {
		t.Fatal(err)
	}
	got, _ := readShards(t, cfg.OutDir)
	byRepo := map[string][]Row{}
	for _, r := range got {
		r.DuplicateOf = "" // every later input duplicates the folder
		byRepo[r.Repository] = append(byRepo[r.Repository], r)
	}
	want := byRepo[folder.Name]
	if len(want) == 0 {
		t.Fatal("the folder gives no rows")
	}
	for _, r := range repos[1:] {
		rows := byRepo[r.Name]
		if len(rows) != len(want) {
			t.Fatalf("%s: %d rows, want %d as the folder", r.Name, len(rows), len(want))
		}
		for i := range rows {
			if !reflect.DeepEqual(rows[i].Row, want[i].Row) {
				t.Fatalf("%s row %d:\n got %+v\nwant %+v", r.Name, i, rows[i].Row, want[i].Row)
			}
		}
	}
}

func TestUnpackInputErrors(t *testing.T) {
	root := t.TempDir()
	evil := filepath.Join(root, "evil.zip")
	writeZip(t, evil, map[string][]byte{"../x.py": []byte("x = 1\n")})
	notBundle := filepath.Join(root, "n.bundle")
	if err := os.WriteFile(notBundle, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{evil, notBundle, filepath.Join(root, "missing.tar")} {
		if err := unpackInput(context.Background(), p, t.TempDir()); err == nil {
			t.Errorf("%s: no error", filepath.Base(p))
		} else {
			t.Logf("%s: %v", filepath.Base(p), err)
		}
	}
}
