package pipeline

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/memfs"
)

// remoteArchives writes one repository as a zip, a tar.gz and (with git) a bundle
// into a new local folder and the same bytes under the memfs folder base (a URL
// ending in /). It returns the local folder and the archives' file names.
func remoteArchives(t *testing.T, base string) (string, []string) {
	t.Helper()
	folder := threeRepos(t)[0].Path
	files := archiveFiles(t, folder)
	dir := t.TempDir()
	writeZip(t, filepath.Join(dir, "z.zip"), files)
	writeTarGz(t, filepath.Join(dir, "t.tar.gz"), files)
	names := []string{"t.tar.gz", "z.zip"}
	if writeBundle(t, filepath.Join(dir, "b.bundle"), folder) {
		names = append([]string{"b.bundle"}, names...)
	}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		memfs.Write(base+n, b)
	}
	return dir, names
}

// TestPreprocessMemfs runs archives read through Beam's memfs file system (globs
// listed by its List, files read on the workers) and the same archives read
// locally: the shards hold the same rows, byte for byte. The memfs run also writes
// its shards to memfs.
func TestPreprocessMemfs(t *testing.T) {
	ctx := context.Background()
	base := "memfs://" + t.Name() + "/repos/"
	local, names := remoteArchives(t, base)
	memfs.Write(base+"notes/readme.txt", []byte("not listed by the globs\n"))

	_, err := ExpandRepos(ctx, []string{base + "*.*", base + "[z]*"})
	if err == nil || !strings.Contains(err.Error(), "z is given twice") {
		t.Fatalf("two globs matching z.zip: %v", err)
	}
	remoteRepos, err := ExpandRepos(ctx, []string{base + "*.*"})
	if err != nil {
		t.Fatal(err)
	}
	localRepos, err := ExpandRepos(ctx, []string{filepath.Join(local, "*")})
	if err != nil {
		t.Fatal(err)
	}
	if len(remoteRepos) != len(names) || len(localRepos) != len(names) {
		t.Fatalf("remote %v, local %v: want %d inputs each", remoteRepos, localRepos, len(names))
	}
	for i, n := range names {
		r, l := remoteRepos[i], localRepos[i]
		if r.Path != base+n || r.Name != l.Name || r.Index != i || l.Index != i {
			t.Fatalf("input %d: remote %+v, local %+v; want %s, both named alike", i, r, l, base+n)
		}
	}

	run := func(repos []RepoSpec, out string) {
		t.Helper()
		cfg := PreprocessConfig{Repos: repos, Chunk: DefaultChunkOptions(), OutDir: out, ShardRows: 9}
		if _, err := Run(ctx, "prism", func(s beam.Scope) error { return Preprocess(s, cfg) }); err != nil {
			t.Fatal(err)
		}
	}
	localOut := t.TempDir()
	remoteOut := "memfs://" + t.Name() + "/out"
	run(localRepos, localOut)
	run(remoteRepos, remoteOut)

	want, shards := readShards(t, localOut)
	if len(want) == 0 || len(shards) < 2 {
		t.Fatalf("the local run gives %d rows in %d shards, want some rows in several", len(want), len(shards))
	}
	fsys, err := filesystem.New(ctx, remoteOut)
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	listed, err := fsys.List(ctx, remoteOut+"/chunks-*.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) != len(shards) {
		t.Fatalf("memfs holds shards %v, want %d", listed, len(shards))
	}
	var got []Row
	for i, s := range shards {
		b, err := filesystem.Read(ctx, fsys, remoteOut+"/"+filepath.Base(s))
		if err != nil {
			t.Fatal(err)
		}
		wb, _ := os.ReadFile(s)
		if !bytes.Equal(b, wb) {
			t.Errorf("shard %d (%s) differs between the memfs and the local inputs", i, filepath.Base(s))
		}
		got = append(got, readRows[Row](t, b)...)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("memfs inputs give %d rows, local inputs %d, not the same", len(got), len(want))
	}
	perRepo := map[string]int{}
	for _, r := range got {
		perRepo[r.Repository]++
	}
	for _, r := range remoteRepos {
		if perRepo[r.Name] == 0 || perRepo[r.Name] != perRepo[remoteRepos[0].Name] {
			t.Errorf("rows per repository %v: want every archive to give the same rows", perRepo)
		}
	}
}

func TestExpandReposErrors(t *testing.T) {
	ctx := context.Background()
	base := "memfs://" + t.Name() + "/"
	memfs.Write(base+"a.zip", []byte("PK"))
	memfs.Write(base+"docs/readme.txt", []byte("x"))
	localZip := filepath.Join(t.TempDir(), "a.zip")
	if err := os.WriteFile(localZip, []byte("PK"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string // in the message, with the argument
	}{
		{[]string{base + "none/*.zip"}, "matches nothing"},
		{[]string{base + "missing.tar.gz"}, "no such file"},
		{[]string{"nosuch://bucket/r.zip"}, `scheme "nosuch" not registered`},
		{[]string{"nosuch://bucket/*.zip"}, `scheme "nosuch" not registered`},
		{[]string{base + "docs"}, "remote input must be a zip"},
		{[]string{base + "docs/*"}, "remote input must be a zip"},
		{[]string{filepath.Join(t.TempDir(), "*.zip")}, "matches nothing"},
		{[]string{filepath.Join(t.TempDir(), "missing")}, "no such file"},
		{[]string{localZip, base + "a.zip"}, "a is given twice"},
	} {
		_, err := ExpandRepos(ctx, c.args)
		if err == nil {
			t.Errorf("%v: no error", c.args)
			continue
		}
		t.Logf("%v: %v", c.args, err)
		arg := c.args[len(c.args)-1]
		if c.want == "a is given twice" {
			arg = ""
		}
		if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), strings.TrimSuffix(arg, "*")) {
			t.Errorf("%v: error %q (bad input %v), want it to name the input and say %q", c.args, err, errors.Is(err, ErrBadInput), c.want)
		}
	}

	// An input gone between the listing and the worker: the worker's error names it.
	for _, p := range []string{base + "gone.zip", base + "gone.tar", base + "gone.bundle"} {
		err := unpackInput(ctx, p, t.TempDir())
		if err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %v, want one naming it", path.Base(p), err)
		}
	}
}
