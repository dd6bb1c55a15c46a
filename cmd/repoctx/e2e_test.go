package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/repoctx/repoctx/internal/racetest"
)

// TestMain lets the test binary act as the repoctx command when REPOCTX_RUN_MAIN is
// set, so tests can run it as a subprocess and kill it.
func TestMain(m *testing.M) {
	if os.Getenv("REPOCTX_RUN_MAIN") == "1" {
		os.Exit(Main(append([]string{"repoctx"}, os.Args[1:]...), os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(append([]string{"repoctx"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func outputLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// badDir copies testdata/bad into a temp dir and adds the hostile files git cannot
// hold: symlinks escaping the snapshot and looping, a 50 MB one-line file, deep
// nesting.
func badDir(t *testing.T) string {
	dir := t.TempDir()
	copyTree(t, "../../testdata/bad", dir)
	pkg := filepath.Join(dir, "repositories-python-bad", "acme__messy-1111111111111111111111111111111111111111", "pkg")
	must(t, os.Symlink("/etc/passwd", filepath.Join(pkg, "escape.py")))
	must(t, os.Symlink("..", filepath.Join(pkg, "loop")))
	big := bytes.Repeat([]byte("a=1;"), 50<<20/4)
	must(t, os.WriteFile(filepath.Join(pkg, "minified.py"), append(big, '\n'), 0o644))
	deep := "x = " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "\n"
	must(t, os.WriteFile(filepath.Join(pkg, "deep.py"), []byte(deep), 0o644))
	return dir
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

var badIDs = map[int]string{ // 0-based output line -> what the error must name
	1: ":2", 2: "missing-path", 3: "escapes-repo", 4: "absolute-path", 5: "no-snapshot", 6: "bad-repo",
}

// TestBadInputEndToEnd runs predict over testdata/bad: every good datapoint is
// answered, every bad one gets an empty context and an error naming it, the exit
// status is 3, and the output is the same for 1 and 3 workers and from a zip.
func TestBadInputEndToEnd(t *testing.T) {
	dir := badDir(t)
	out1 := filepath.Join(t.TempDir(), "out.jsonl")
	code, _, stderr := run(t, "predict", "--data", dir, "--lang", "python", "--stage", "bad", "-o", out1, "-j", "1", "-q", "--cache-dir", t.TempDir())
	if code != exitSomeFailed {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitSomeFailed, stderr)
	}
	lines := outputLines(t, out1)
	if len(lines) != 10 {
		t.Fatalf("%d output lines, want 10", len(lines))
	}
	for i, l := range lines {
		var v struct{ Context string }
		must(t, json.Unmarshal([]byte(l), &v))
		if name, bad := badIDs[i]; bad {
			if v.Context != "" {
				t.Errorf("line %d (%s): context not empty", i+1, name)
			}
			if !strings.Contains(stderr, name) {
				t.Errorf("stderr does not name %q:\n%s", name, stderr)
			}
		} else if v.Context == "" {
			t.Errorf("line %d: good datapoint got an empty context", i+1)
		}
	}
	if !strings.Contains(lines[0], `return round(net * (1 + rate / 100), 2)`) {
		t.Errorf("good datapoint's context lacks the old copy of the line being written: %.300s", lines[0])
	}
	// Same bytes with 3 workers and a fresh cache.
	out3 := filepath.Join(t.TempDir(), "out.jsonl")
	run(t, "predict", "--data", dir, "--lang", "python", "--stage", "bad", "-o", out3, "-j", "3", "-q", "--cache-dir", t.TempDir())
	if a, b := strings.Join(lines, "\n"), strings.Join(outputLines(t, out3), "\n"); a != b {
		t.Errorf("output differs between 1 and 3 workers")
	}

	// The same from a zip of zips with a hostile inner zip added: zip-slip, absolute
	// and duplicate entries in the good snapshot, and a corrupt snapshot.
	zdir := t.TempDir()
	snapDir := filepath.Join(dir, "repositories-python-bad", "acme__messy-1111111111111111111111111111111111111111")
	var inner bytes.Buffer
	iw := zip.NewWriter(&inner)
	filepath.WalkDir(snapDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || strings.HasSuffix(p, "minified.py") {
			return nil
		}
		rel, _ := filepath.Rel(snapDir, p)
		w, _ := iw.Create(filepath.ToSlash(rel))
		b, _ := os.ReadFile(p)
		w.Write(b)
		return nil
	})
	for _, name := range []string{"../../evil.py", "/abs/evil.py", "pkg/prices.py"} {
		w, _ := iw.Create(name)
		w.Write([]byte("def evil():\n    pass\n"))
	}
	iw.Close()
	var outer bytes.Buffer
	ow := zip.NewWriter(&outer)
	w, _ := ow.Create("acme__messy-1111111111111111111111111111111111111111.zip")
	w.Write(inner.Bytes())
	w, _ = ow.Create("acme__messy-2222222222222222222222222222222222222222.zip")
	w.Write([]byte("PK\x03\x04 this is not a zip"))
	ow.Close()
	must(t, os.WriteFile(filepath.Join(zdir, "python-bad.zip"), outer.Bytes(), 0o644))
	b, _ := os.ReadFile(filepath.Join(dir, "python-bad.jsonl"))
	must(t, os.WriteFile(filepath.Join(zdir, "python-bad.jsonl"), b, 0o644))
	outz := filepath.Join(t.TempDir(), "out.jsonl")
	code, _, stderr = run(t, "predict", "--data", zdir, "--lang", "python", "--stage", "bad", "-o", outz, "-q", "--cache-dir", t.TempDir())
	if code != exitSomeFailed {
		t.Fatalf("zip: exit %d; stderr:\n%s", code, stderr)
	}
	zl := outputLines(t, outz)
	if len(zl) != 10 || strings.Contains(strings.Join(zl, ""), "def evil") {
		t.Errorf("zip: %d lines, or a refused entry's content leaked into a context", len(zl))
	}
	if !strings.Contains(stderr, "no-snapshot") {
		t.Errorf("zip: corrupt snapshot's datapoint not reported:\n%s", stderr)
	}
	for _, i := range []int{0, 7, 8, 9} {
		if zl[i] == `{"context":""}` {
			t.Errorf("zip: good line %d empty", i+1)
		}
	}

	// A truncated outer zip: a clear error naming the file, exit 1, no output.
	tdir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(tdir, "python-bad.zip"), outer.Bytes()[:outer.Len()/2], 0o644))
	must(t, os.WriteFile(filepath.Join(tdir, "python-bad.jsonl"), b, 0o644))
	code, _, stderr = run(t, "predict", "--data", tdir, "--lang", "python", "--stage", "bad", "-o", filepath.Join(tdir, "o.jsonl"), "-q")
	if code != exitError || !strings.Contains(stderr, "python-bad.zip") {
		t.Errorf("truncated zip: exit %d, stderr %q", code, stderr)
	}
}

// TestUsageErrors: bad flags and arguments exit 2 with a message.
func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"predict", "--data", "x", "--lang", "cobol", "--stage", "s"},
		{"predict", "--lang", "python"},
		{"predict", "--data", "x", "--lang", "kotlin", "--stage", "s", "--langs", "kotlin,cobol"},
		{"eval", "--data", "x", "--lang", "kotlin", "--stage", "s", "--langs", "cobol"},
		{"index", "../../testdata/sample", "--langs", "cobol"},
		{"chunk", "--langs", "cobol", "../../testdata/sample"},
		{"chunk"},
		{"chunk", "--strategy", "semantic", "x.py"},
		{"query", "../../testdata/sample", "--file", "a.py"},
		{"nonsense-flag", "--bogus"},
	} {
		code, _, stderr := run(t, args...)
		if code != exitUsage && !(args[0] == "nonsense-flag" && code != exitOK) {
			t.Errorf("%v: exit %d, want %d (stderr %q)", args, code, exitUsage, stderr)
		}
	}
	code, _, stderr := run(t, "predict", "--data", t.TempDir(), "--lang", "python", "--stage", "none", "-q")
	if code != exitError || !strings.Contains(stderr, "python-none.jsonl") {
		t.Errorf("missing datapoints file: exit %d, stderr %q", code, stderr)
	}
}

// TestKillAndResume kills predict at random moments (during indexing and while
// writing) and resumes it until it finishes: the output must be byte-identical to an
// uninterrupted run.
func TestKillAndResume(t *testing.T) {
	racetest.Skip(t, "kills and resumes a whole predict process")
	if testing.Short() {
		t.Skip("short")
	}
	exe, err := os.Executable()
	must(t, err)
	dir := t.TempDir()
	sample, _ := filepath.Abs("../../testdata/sample")
	must(t, os.Symlink(filepath.Join(sample, "repositories-python-sample"), filepath.Join(dir, "repositories-python-many")))
	base := outputLinesRaw(t, filepath.Join(sample, "python-sample.jsonl"))
	var many []string
	for r := 0; r < 30; r++ {
		for _, l := range base {
			var m map[string]any
			must(t, json.Unmarshal([]byte(l), &m))
			m["id"] = fmt.Sprintf("%v-r%d", m["id"], r)
			b, _ := json.Marshal(m)
			many = append(many, string(b))
		}
	}
	must(t, os.WriteFile(filepath.Join(dir, "python-many.jsonl"), []byte(strings.Join(many, "\n")+"\n"), 0o644))

	want := filepath.Join(t.TempDir(), "want.jsonl")
	if code, _, stderr := run(t, "predict", "--data", dir, "--lang", "python", "--stage", "many", "-o", want, "-q", "--cache-dir", t.TempDir()); code != 0 {
		t.Fatalf("reference run: exit %d: %s", code, stderr)
	}
	out := filepath.Join(t.TempDir(), "out.jsonl")
	cache := t.TempDir()
	rng := rand.New(rand.NewSource(1))
	kills := 0
	for attempt := 0; attempt < 40; attempt++ {
		args := []string{"predict", "--data", dir, "--lang", "python", "--stage", "many", "-o", out, "-q", "--cache-dir", cache, "-j", "2"}
		if attempt > 0 {
			args = append(args, "--resume")
		}
		cmd := exec.Command(exe, args...)
		cmd.Env = append(os.Environ(), "REPOCTX_RUN_MAIN=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		must(t, cmd.Start())
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		delay := time.Duration(rng.Intn(300)+5) * time.Millisecond
		if attempt >= 8 {
			delay = time.Minute // enough kills: let it finish
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("attempt %d: %v: %s", attempt, err, stderr.String())
			}
			if got, exp := readFile(t, out), readFile(t, want); got != exp {
				t.Fatalf("after %d kills the output differs from an uninterrupted run", kills)
			}
			t.Logf("finished after %d kills", kills)
			return
		case <-time.After(delay):
			cmd.Process.Kill()
			<-done
			kills++
		}
	}
	t.Fatal("never finished")
}

func readFile(t *testing.T, p string) string {
	b, err := os.ReadFile(p)
	must(t, err)
	return string(b)
}

func outputLinesRaw(t *testing.T, p string) []string {
	return strings.Split(strings.TrimSpace(readFile(t, p)), "\n")
}

// TestQueryFlagsAfterRepo: flags may follow the positional REPO_DIR (as documented),
// and the context ends with the most relevant part.
func TestQueryFlagsAfterRepo(t *testing.T) {
	repo := "../../testdata/sample/repositories-python-sample/acme__invoicing-3883f317f2454c5c841829b87ede02c71c20ef65"
	dir := t.TempDir()
	pf := filepath.Join(dir, "p.txt")
	must(t, os.WriteFile(pf, []byte("from .money import parse_amount\n\n\ndef total(values):\n    return sum(parse_amount("), 0o644))
	code, out, stderr := run(t, "query", repo, "--file", "invoicing/new.py", "--prefix-file", pf, "--cache-dir", t.TempDir(), "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var v struct {
		Parts []struct {
			Path string
			Why  []string
			Text string
		}
		Context string
	}
	must(t, json.Unmarshal([]byte(out), &v))
	if len(v.Parts) == 0 || !strings.HasPrefix(v.Context, "<|file_sep|>") {
		t.Fatalf("no parts: %s", out)
	}
	for _, p := range v.Parts { // each part's text, as the context renders it
		if p.Text == "" || !strings.Contains(v.Context, "<|file_sep|>"+p.Path+"\n"+p.Text) {
			t.Errorf("part %s: text %q is not its span of the context", p.Path, p.Text)
		}
	}
	found := false
	for _, p := range v.Parts {
		for _, w := range p.Why {
			found = found || (p.Path == "invoicing/money.py" && strings.HasPrefix(w, "def:parse_amount"))
		}
	}
	if !found {
		t.Errorf("definition of parse_amount (imported from .money) not in the parts: %+v", v.Parts)
	}
}

// TestPredictEmptyShard: a shard that holds none of the dataset's repositories (the
// sample has one per language) writes an empty file and says so, exit 0.
func TestPredictEmptyShard(t *testing.T) {
	out := filepath.Join(t.TempDir(), "shard-2.jsonl")
	code, _, stderr := run(t, "predict", "--data", sample, "--lang", "python", "--stage", "sample", "--shard", "2/2", "-o", out, "--cache-dir", t.TempDir())
	if code != exitOK || !strings.Contains(stderr, "no datapoints (shard 2/2 holds none") {
		t.Errorf("empty shard: exit %d, stderr %q", code, stderr)
	}
	if b, err := os.ReadFile(out); err != nil || len(b) != 0 {
		t.Errorf("empty shard's output: %q, %v; want an empty file", b, err)
	}
}

// TestPredictInterrupted: a cancelled context (main's, on SIGINT or SIGTERM) stops
// predict with exit 1 and a message naming the journal to resume, without the
// summary line of a finished run.
func TestPredictInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := filepath.Join(t.TempDir(), "out.jsonl")
	var stdout, stderr bytes.Buffer
	code := MainContext(ctx, []string{"repoctx", "predict", "--data", sample, "--lang", "python", "--stage", "sample", "-o", out, "--cache-dir", t.TempDir()}, &stdout, &stderr)
	if code != exitError || !strings.Contains(stderr.String(), "repoctx: interrupted") || strings.Contains(stderr.String(), "wrote ") {
		t.Errorf("interrupted predict: exit %d, stderr %q; want exit 1 and an interrupted message", code, stderr.String())
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("an interrupted run wrote %s", out)
	}
}

// TestPredictStoredViews: predict stores each snapshot's view the second run in a row
// on the same snapshots and reads it back from the third, with the same output; with
// --no-stored-view it neither reads nor writes one.
func TestPredictStoredViews(t *testing.T) {
	cache, dir := t.TempDir(), t.TempDir()
	views := func(cache string) int {
		n := 0
		filepath.WalkDir(cache, func(p string, d fs.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(p, ".view") {
				n++
			}
			return nil
		})
		return n
	}
	predict := func(cache, out string, more ...string) string {
		t.Helper()
		args := append([]string{"predict", "--data", sample, "--lang", "python", "--stage", "sample", "-o", out, "--cache-dir", cache}, more...)
		code, _, stderr := run(t, args...)
		if code != exitOK {
			t.Fatalf("predict %v: exit %d: %s", more, code, stderr)
		}
		return stderr
	}
	want := filepath.Join(dir, "first.jsonl")
	predict(cache, want)
	if n := views(cache); n != 0 {
		t.Errorf("%d views stored by the first run", n)
	}
	stderr := predict(cache, filepath.Join(dir, "second.jsonl"))
	stored := views(cache)
	if stored == 0 {
		t.Fatal("the second run stored no view")
	}
	if !strings.Contains(stderr, fmt.Sprintf("; %d views stored whole", stored)) {
		t.Errorf("the second run's summary does not count the %d views it stored: %s", stored, stderr)
	}
	out := filepath.Join(dir, "third.jsonl")
	if stderr := predict(cache, out); !strings.Contains(stderr, fmt.Sprintf("%d of them views read back whole", stored)) {
		t.Errorf("the third run did not read the %d stored views back: %s", stored, stderr)
	}
	if !slices.Equal(outputLines(t, out), outputLines(t, want)) {
		t.Error("the output from the stored views differs from the first run's")
	}
	if stderr := predict(cache, out, "--no-stored-view"); !strings.Contains(stderr, " 0 of them views read back whole") {
		t.Errorf("--no-stored-view read views back: %s", stderr)
	}
	if !slices.Equal(outputLines(t, out), outputLines(t, want)) {
		t.Error("the output with --no-stored-view differs from the first run's")
	}
	fresh := t.TempDir()
	for range 3 {
		predict(fresh, out, "--no-stored-view")
	}
	if n := views(fresh); n != 0 {
		t.Errorf("--no-stored-view stored %d views", n)
	}
}
