package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/repoctx/repoctx/internal/faultfs"
)

const sample = "../../testdata/sample"

// TestInterspersed: flags may follow positional arguments for every command and
// subcommand; values of flags that take one stay with them, bool flags take none,
// "--" ends the flags and global flags stay before the command.
func TestInterspersed(t *testing.T) {
	app := newApp(&bytes.Buffer{}, &bytes.Buffer{})
	for _, tc := range []struct{ in, want string }{
		{"query REPO --file F --json", "query --file F --json REPO"},
		{"query REPO --json --file F", "query --json --file F REPO"},
		{"query REPO --file=F -json", "query --file=F -json REPO"},
		{"query --json=false REPO -v", "query --json=false -v REPO"},
		{"query REPO --file F -- --not-a-flag X", "query --file F REPO -- --not-a-flag X"},
		{"index REPO -o", "index -o REPO"},
		{"dataset from-git REPO --lang kotlin --stage s -o out", "dataset from-git --lang kotlin --stage s -o out REPO"},
		{"dataset from-git R1 --per-repo 3 R2 --verbose", "dataset from-git --per-repo 3 --verbose R1 R2"},
		{"model info DIR --backend go", "model info --backend go DIR"},
		{"--cpuprofile cpu.out chunk a.py --format jsonl b.py", "--cpuprofile cpu.out chunk --format jsonl a.py b.py"},
		{"chunk - --stats", "chunk --stats -"},
		{"predict -o - --data D", "predict -o - --data D"},
		{"tokens --tokenizer T a.txt b.txt", "tokens --tokenizer T a.txt b.txt"},
		{"dataset", "dataset"},
		{"unknown X --flag", "unknown X --flag"},
	} {
		got := strings.Join(interspersed(app, append([]string{"repoctx"}, strings.Fields(tc.in)...))[1:], " ")
		if got != tc.want {
			t.Errorf("%s\n got  %s\n want %s", tc.in, got, tc.want)
		}
	}
}

// TestFlagsAfterArguments: a subcommand reads the flags given after its arguments
// (`dataset from-git REPO --lang kotlin` once reported them as not set).
func TestFlagsAfterArguments(t *testing.T) {
	notGit := t.TempDir()
	code, _, stderr := run(t, "dataset", "from-git", notGit, "--lang", "kotlin", "--stage", "s", "--out", t.TempDir())
	if strings.Contains(stderr, "required") || code == exitOK {
		t.Errorf("exit %d, %q: the flags after REPO were not read", code, stderr)
	}
	code, out, stderr := run(t, "model", "info", "../../testdata/models/tiny-bert", "--backend", "go")
	if code != exitOK || !strings.Contains(out, "dimension 32") {
		t.Errorf("model info DIR --backend go: exit %d, %q %q", code, out, stderr)
	}
}

// TestVersion: --version and the version command print the module version and the
// VCS revision.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		code, out, stderr := run(t, args...)
		if code != exitOK || !strings.HasPrefix(out, "repoctx ") || !strings.Contains(out, "revision") || stderr != "" {
			t.Errorf("%v: exit %d, %q %q", args, code, out, stderr)
		}
	}
	bi := &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	if got := formatVersion(bi); !strings.HasPrefix(got, "repoctx v1.2.3, revision 0123abcd (modified) 2026-12-01T10:00:00Z, go") {
		t.Errorf("formatVersion = %q", got)
	}
	if got := formatVersion(nil); !strings.HasPrefix(got, "repoctx (devel), revision unknown") {
		t.Errorf("formatVersion(nil) = %q", got)
	}
	if code, _, _ := run(t, "version", "extra"); code != exitUsage {
		t.Errorf("version extra: exit %d", code)
	}
}

// oneLine checks that stderr is exactly one line matching want.
func oneLine(t *testing.T, what, stderr string, want *regexp.Regexp) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if len(lines) != 1 || !want.MatchString(lines[0]) {
		t.Errorf("%s: stderr %q, want one line matching %s", what, stderr, want)
	}
}

// TestUnknownCommandAndMissingFlags: an unknown command exits 2; a missing required
// flag is one line naming the command and where the help is.
func TestUnknownCommandAndMissingFlags(t *testing.T) {
	for _, args := range [][]string{{"frobnicate"}, {"dataset", "frob"}, {"model", "nope", "x"}} {
		code, _, stderr := run(t, args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
		oneLine(t, strings.Join(args, " "), stderr, regexp.MustCompile(`unknown command "(frobnicate|frob|nope)"; see repoctx( dataset| model)? --help$`))
	}
	code, out, stderr := run(t, "predict", "--lang", "kotlin", "--stage", "dev")
	if code != exitUsage || out != "" {
		t.Errorf("predict without --data: exit %d, stdout %q", code, out)
	}
	oneLine(t, "predict without --data", stderr, regexp.MustCompile(`^repoctx predict: --data is required; see repoctx predict --help$`))
	code, _, stderr = run(t, "dataset", "from-git", "x")
	oneLine(t, "from-git without flags", stderr, regexp.MustCompile(`^repoctx dataset from-git: --lang, --stage and --out are required; see repoctx dataset from-git --help$`))
	if code != exitUsage {
		t.Errorf("from-git without flags: exit %d", code)
	}
	code, _, stderr = run(t, "predict", "--data", "x", "--lang", "kotlin", "--stage", "dev", "--bogus")
	oneLine(t, "unknown flag", stderr, regexp.MustCompile(`^repoctx predict: flag provided but not defined: -bogus; see repoctx predict --help$`))
	if code != exitUsage {
		t.Errorf("unknown flag: exit %d", code)
	}
}

// TestNumericFlags: numbers that make no sense are usage errors naming the flag, never
// a silent default.
func TestNumericFlags(t *testing.T) {
	cache := t.TempDir()
	predict := func(extra ...string) []string {
		return append([]string{"predict", "--data", sample, "--lang", "kotlin", "--stage", "sample", "-q", "--cache-dir", cache, "-o", filepath.Join(cache, "o.jsonl")}, extra...)
	}
	evalArgs := func(extra ...string) []string {
		return append([]string{"eval", "--data", sample, "--lang", "kotlin", "--stage", "sample", "--cache-dir", cache}, extra...)
	}
	repo := filepath.Join(sample, "repositories-python-sample")
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{predict("--workers", "0"), "--workers"},
		{predict("-j", "-2"), "--workers"},
		{predict("--max-chars", "0"), "--max-chars"},
		{predict("--window-lines", "0"), "--window-lines"},
		{predict("--overlap-lines", "-1"), "--overlap-lines"},
		{predict("--window-lines", "10", "--overlap-lines", "10"), "--overlap-lines"},
		{predict("--budget", "0"), "--budget"},
		{predict("--budget", "-1"), "--budget"},
		{predict("--top-k", "0"), "--top-k"},
		{predict("--top-k", "10001"), "--top-k"}, // a huge k must not reserve memory by k
		{predict("--top-k", "1000000000"), "--top-k"},
		{predict("--workers", "1025"), "--workers"},
		{predict("--query-lines", "0"), "--query-lines"},
		{predict("--relative-weight", "NaN"), "--relative-weight"},
		{predict("--min-score-ratio", "-0.5"), "--min-score-ratio"},
		{predict("--plan-window", "100"), "--plan-window"},
		{evalArgs("--limit", "-1"), "--limit"},
		{evalArgs("--window", "0"), "--window"},
		{evalArgs("--window", "384"), "--window"}, // as --plan-window 384: no room for context
		{evalArgs("--window", "8000,8000"), "--window"},
		{evalArgs("--budget-chars", "100,100"), "--budget-chars"},
		{predict("--plan-window", "384"), "--plan-window"},
		{evalArgs("--workers", "0"), "--workers"},
		{[]string{"chunk", "--workers", "0", repo}, "--workers"},
		{[]string{"chunk", "--workers", "100000000", repo}, "--workers"},
		{[]string{"query", "--top-k", "100000", "--cache-dir", cache, repo, "--file", "a.py"}, "--top-k"},
		{[]string{"chunk", "--max-chars", "0", repo}, "--max-chars"},
		{[]string{"chunk", "--strategy", "fixed", "--window-lines", "-3", repo}, "--window-lines"},
		{[]string{"chunk", "--max-file-bytes", "0", repo}, "--max-file-bytes"},
		{[]string{"index", "--max-chars", "-5", "--cache-dir", cache, repo}, "--max-chars"},
		{[]string{"compare", "--limit", "-1", repo}, "--limit"},
		{[]string{"compare", "--max-chars", "0", repo}, "--max-chars"},
		{[]string{"dataset", "from-git", "--lang", "kotlin", "--stage", "s", "--out", cache, "--per-repo", "0", repo}, "--per-repo"},
		{[]string{"dataset", "from-git", "--lang", "kotlin", "--stage", "s", "--out", cache, "--max-file-bytes", "-1", repo}, "--max-file-bytes"},
		{[]string{"dataset", "from-git", "--lang", "kotlin", "--stage", "s", "--out", cache, "--style", "big", repo}, "--style"},
	} {
		code, _, stderr := run(t, tc.args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d (%q)", tc.args, code, exitUsage, stderr)
			continue
		}
		oneLine(t, strings.Join(tc.args, " "), stderr, regexp.MustCompile(regexp.QuoteMeta(tc.flag)))
	}
}

// packagePrefix matches a message that starts with a package name.
var packagePrefix = regexp.MustCompile(`(?m)^(repoctx: )?(dataset|fromgit|retrieve|hugot|eval|assemble|index|snapshot|store|batch|chunker|symbols|grammars|tokens):`)

// TestBadInputMessages runs every command on bad input: the exit status is 1 or 2 and
// no message starts with a package name; each names what is wrong.
func TestBadInputMessages(t *testing.T) {
	dir := t.TempDir()
	cache := t.TempDir()
	// A predictions file with the wrong number of lines.
	short := filepath.Join(dir, "short.jsonl")
	must(t, os.WriteFile(short, []byte("{\"context\":\"\"}\n"), 0o644))
	badModel := filepath.Join(dir, "model")
	must(t, os.MkdirAll(badModel, 0o755))
	for _, f := range []string{"model.onnx", "tokenizer.json", "config.json"} {
		b, err := os.ReadFile(filepath.Join("../../testdata/models/tiny-bert", f))
		must(t, err)
		must(t, os.WriteFile(filepath.Join(badModel, f), b, 0o644))
	}
	must(t, os.WriteFile(filepath.Join(badModel, "sentence_bert_config.json"), []byte("{max_seq_length: 256"), 0o644))
	tok := filepath.Join(dir, "tokenizer.json")
	must(t, os.WriteFile(tok, []byte("not json"), 0o644))
	repo := filepath.Join(sample, "repositories-python-sample")
	for _, tc := range []struct {
		args []string
		code int
		want string // in stderr
	}{
		{[]string{"chunk", filepath.Join(dir, "missing.py")}, exitError, "missing.py"},
		{[]string{"index", "--cache-dir", cache, filepath.Join(dir, "nope")}, exitError, "nope"},
		{[]string{"query", repo, "--file", "a.py", "--prefix-file", filepath.Join(dir, "nope.txt")}, exitError, "nope.txt"},
		{[]string{"predict", "--data", filepath.Join(dir, "nodata"), "--lang", "python", "--stage", "dev", "-q", "--cache-dir", cache}, exitError, "python-dev.jsonl"},
		{[]string{"predict", "--data", sample, "--lang", "python", "--stage", "sample", "-q", "--cache-dir", cache, "--model", badModel}, exitUsage, "sentence_bert_config.json"},
		{[]string{"eval", "--data", filepath.Join(dir, "nodata"), "--lang", "python", "--stage", "dev"}, exitError, "python-dev.jsonl"},
		{[]string{"eval", "--data", sample, "--lang", "python", "--stage", "sample", "--predictions", short}, exitError, "1 lines, want 4"},
		{[]string{"eval", "--data", sample, "--lang", "python", "--stage", "sample", "--config", "best"}, exitUsage, `"best"`},
		{[]string{"eval", "--data", sample, "--lang", "python", "--stage", "sample", "--config", "empty", "--compare-to", "current"}, exitUsage, `--compare-to: "current"`},
		{[]string{"dataset", "from-git", "--lang", "kotlin", "--stage", "s", "--out", dir, dir}, exitError, dir},
		{[]string{"model", "info", dir}, exitError, dir},
		{[]string{"model", "info", badModel}, exitError, "malformed"},
		{[]string{"compare", filepath.Join(dir, "nope")}, exitError, "nope"},
		{[]string{"tokens", "--tokenizer", tok, "x"}, exitUsage, "tokenizer"},
		{[]string{"tokens", "--tokenizer", filepath.Join(dir, "none.json")}, exitUsage, "none.json"},
	} {
		code, _, stderr := run(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d (want %d), stderr %q (want it to name %q)", tc.args, code, tc.code, stderr, tc.want)
		}
		if packagePrefix.MatchString(stderr) {
			t.Errorf("%v: a message starts with a package name: %q", tc.args, stderr)
		}
	}
}

// TestProgressLines: without a terminal, progress is a line per 10% (and per 30 s
// when steps are slow), and a last line.
func TestProgressLines(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, "predict kotlin-dev", "datapoints", 40)
	now := p.start
	p.now = func() time.Time { return now }
	for i := 1; i <= 40; i++ {
		if i == 3 {
			now = now.Add(31 * time.Second) // a slow step: a line before the first 10%
		}
		p.set(i)
	}
	p.finish()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 11 || lines[0] != "predict kotlin-dev: 7% (3 of 40 datapoints), 31s" ||
		lines[1] != "predict kotlin-dev: 10% (4 of 40 datapoints), 31s" || lines[10] != "predict kotlin-dev: 100% (40 of 40 datapoints), 31s" {
		t.Errorf("progress lines:\n%s", buf.String())
	}
	// Unknown total: a line per 30 s only.
	buf.Reset()
	p = newProgress(&buf, "chunking", "files", -1)
	now = p.start
	p.now = func() time.Time { return now }
	for range 100 {
		now = now.Add(time.Second)
		p.add(1)
	}
	p.finish()
	if got := strings.Count(buf.String(), "\n"); got != 4 || !strings.HasSuffix(buf.String(), "chunking: 100 files, 100s\n") {
		t.Errorf("unknown total:\n%s", buf.String())
	}
	// A quick job with no line written stays silent.
	buf.Reset()
	p = newProgress(&buf, "x", "files", -1)
	p.add(3)
	p.finish()
	if buf.Len() != 0 {
		t.Errorf("quick job wrote %q", buf.String())
	}
}

// TestStripPrefixes: library prefixes go, the rest of the message stays.
func TestStripPrefixes(t *testing.T) {
	for in, want := range map[string]string{
		"dataset: open datapoints: open x: no such file": "open datapoints: open x: no such file",
		"eval: retrieve: bm25: boom":                     "bm25: boom",
		"cannot write the cache: dataset: x":             "cannot write the cache: dataset: x",
		"chunk: --format must be text":                   "chunk: --format must be text",
	} {
		if got := stripPrefixes(in); got != want {
			t.Errorf("stripPrefixes(%q) = %q, want %q", in, got, want)
		}
	}
	if !slices.Contains(libraryPrefixes, "retrieve") {
		t.Error("retrieve missing")
	}
}

// TestPredictFullDisk: predict with its cache on a tmpfs too small for the indexes
// (skipped when mounting is not permitted) stops with one line saying what could not
// be written and how to continue, exit 1, no output and the journal kept; rerun with
// --resume and room, it writes what a clean run writes.
func TestPredictFullDisk(t *testing.T) {
	small := faultfs.Tmpfs(t, 64<<10, false)
	out := filepath.Join(t.TempDir(), "out.jsonl")
	args := []string{"predict", "--data", sample, "--lang", "kotlin", "--stage", "sample", "-q", "-o", out}
	code, _, stderr := run(t, append(args, "--cache-dir", small)...)
	if code != exitError {
		t.Fatalf("exit %d, want %d; %q", code, exitError, stderr)
	}
	oneLine(t, "full disk", stderr, regexp.MustCompile(`^repoctx: cannot write the index cache in .*: no space left on device; stopped: the journal .*out\.jsonl\.partial keeps 0 of 4 datapoints: fix the cause and rerun the same command with --resume$`))
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output written: %v", err)
	}
	cache := t.TempDir()
	if code, _, stderr := run(t, append(args, "--cache-dir", cache, "--resume")...); code != exitOK {
		t.Fatalf("resumed: exit %d, %q", code, stderr)
	}
	clean := filepath.Join(t.TempDir(), "clean.jsonl")
	run(t, "predict", "--data", sample, "--lang", "kotlin", "--stage", "sample", "-q", "-o", clean, "--cache-dir", cache)
	if a, b := readFile(t, out), readFile(t, clean); a != b || a == "" {
		t.Error("the resumed output differs from a clean run")
	}
}
