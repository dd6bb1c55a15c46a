package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	"github.com/parquet-go/parquet-go"

	"github.com/repoctx/repoctx/preprocess"
)

// writeTree writes files (slash path -> text) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, text := range files {
		f := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// pyFile is a small Python module with n functions (several chunks).
func pyFile(name string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\"\"\"Module %s.\"\"\"\nimport os\n\n", name)
	for i := range n {
		fmt.Fprintf(&b, "def %s_%d(x):\n    \"\"\"Return x plus %d.\"\"\"\n    y = x + %d\n    return os.fspath(str(y))\n\n\n", name, i, i, i)
	}
	fmt.Fprintf(&b, "class %sBox:\n    def get(self):\n        return %q\n", strings.ToUpper(name[:1])+name[1:], name)
	return b.String()
}

// threeRepos makes three small repositories; the first two share files (one at the
// same path, one at another), the second also holds a file twice.
func threeRepos(t *testing.T) []RepoSpec {
	root := t.TempDir()
	shared, sharedGo := pyFile("shared", 3), "package lib\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n\n// Sub subtracts.\nfunc Sub(a, b int) int { return a - b }\n"
	repos := []map[string]string{
		{"app/main.py": pyFile("main", 2), "app/shared.py": shared, "lib/math.go": sharedGo, "README.md": "# a\n",
			".gitignore": "build/\n", "build/out.py": pyFile("ignored", 1), "Util.kt": "package u\n\nfun twice(x: Int): Int = 2 * x\n"},
		{"app/shared.py": shared, "pkg/math.go": sharedGo, "tools/gen.py": pyFile("gen", 4), "tools/gen_copy.py": pyFile("gen", 4)},
		{"src/only.py": pyFile("only", 1), "src/empty.py": ""},
	}
	var specs []RepoSpec
	for i, files := range repos {
		dir := filepath.Join(root, fmt.Sprintf("repo%c", 'a'+i))
		writeTree(t, dir, files)
		specs = append(specs, RepoSpec{Index: i, Name: filepath.ToSlash(dir), Path: dir})
	}
	return specs
}

// readRows reads the rows of a Parquet file of type T.
func readRows[T any](t *testing.T, b []byte) []T {
	t.Helper()
	rows, err := parquet.Read[T](bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// readShards reads the shards of dir in name order.
func readShards(t *testing.T, dir string) ([]Row, []string) {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "chunks-*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	var rows []Row
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, readRows[Row](t, b)...)
	}
	return rows, names
}

// libraryRows is what preprocess.Run writes as Parquet for each repository alone
// (`repoctx chunk --format parquet DIR`), read back, and the repository of each row.
func libraryRows(t *testing.T, repos []RepoSpec, opts ChunkOptions) ([]preprocess.Row, []string) {
	t.Helper()
	po, err := opts.preprocessOptions()
	if err != nil {
		t.Fatal(err)
	}
	var rows []preprocess.Row
	var names []string
	for _, r := range repos {
		var buf bytes.Buffer
		if _, err := preprocess.Run(context.Background(), []string{r.Path}, po, preprocess.NewParquetWriter(&buf)); err != nil {
			t.Fatal(err)
		}
		rs := readRows[preprocess.Row](t, buf.Bytes())
		rows = append(rows, rs...)
		for range rs {
			names = append(names, r.Name)
		}
	}
	return rows, names
}

func TestPreprocessPrism(t *testing.T) {
	repos := threeRepos(t)
	opts := DefaultChunkOptions()
	opts.Workers = 2
	want, wantRepo := libraryRows(t, repos, opts)
	// The first holder of each file content, in repository then walk order.
	first := map[string]string{}
	wantDup := make([]string, len(want))
	for i, r := range want {
		file := path.Join(wantRepo[i], r.Path)
		if f, ok := first[r.FileSHA256]; !ok {
			first[r.FileSHA256] = file
		} else if f != file {
			wantDup[i] = f
		}
	}
	nDup := 0
	for _, d := range wantDup {
		if d != "" {
			nDup++
		}
	}
	if nDup == 0 {
		t.Fatal("the generated repositories share no file")
	}

	const shardRows = 7 // several shards, files cut across them
	run := func(out string, drop bool) Counters {
		t.Helper()
		cfg := PreprocessConfig{Repos: repos, Chunk: opts, OutDir: out, ShardRows: shardRows, DropDuplicates: drop}
		c, err := Run(context.Background(), "prism", func(s beam.Scope) error { return Preprocess(s, cfg) })
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	out := t.TempDir()
	c := run(out, false)
	got, shards := readShards(t, out)
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i].Row, want[i]) {
			t.Fatalf("row %d:\n got %+v\nwant %+v", i, got[i].Row, want[i])
		}
		if got[i].Repository != wantRepo[i] || got[i].DuplicateOf != wantDup[i] {
			t.Fatalf("row %d (%s): repository %q duplicate_of %q, want %q %q", i, got[i].ID, got[i].Repository, got[i].DuplicateOf, wantRepo[i], wantDup[i])
		}
	}
	if n := (len(want) + shardRows - 1) / shardRows; len(shards) != n || filepath.Base(shards[0]) != ShardName(0, n) {
		t.Errorf("shards %v, want %d named like %s", shards, n, ShardName(0, n))
	}
	if c["chunks"] != int64(len(want)) || c["rows_written"] != int64(len(want)) || c["duplicate_chunks"] != int64(nDup) || c["repositories"] != 3 {
		t.Errorf("counters %v: want %d chunks and rows written, %d duplicate chunks, 3 repositories", c, len(want), nDup)
	}
	var sum bytes.Buffer
	PrintPreprocessSummary(&sum, c)
	if !strings.Contains(sum.String(), fmt.Sprintf("%d chunks (duplicate_of set)", nDup)) {
		t.Errorf("summary:\n%s", sum.String())
	}

	// The same run again gives the same bytes; with DropDuplicates the duplicates go.
	again := t.TempDir()
	run(again, false)
	for _, s := range shards {
		a, _ := os.ReadFile(s)
		b, err := os.ReadFile(filepath.Join(again, filepath.Base(s)))
		if err != nil || !bytes.Equal(a, b) {
			t.Fatalf("%s differs between two runs (%v)", filepath.Base(s), err)
		}
	}
	dropped := t.TempDir()
	c = run(dropped, true)
	kept, _ := readShards(t, dropped)
	if len(kept) != len(want)-nDup || c["rows_dropped"] != int64(nDup) {
		t.Fatalf("drop: %d rows (%d dropped), want %d", len(kept), c["rows_dropped"], len(want)-nDup)
	}
	for _, r := range kept {
		if r.DuplicateOf != "" {
			t.Fatalf("drop: row %s kept with duplicate_of %s", r.ID, r.DuplicateOf)
		}
	}
}
