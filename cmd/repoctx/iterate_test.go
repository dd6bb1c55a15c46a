package main

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestIterationsFlags: --iterations and the draft flags are checked like every flag.
func TestIterationsFlags(t *testing.T) {
	cache := t.TempDir()
	predict := func(extra ...string) []string {
		return append([]string{"predict", "--data", sample, "--lang", "python", "--stage", "sample", "-q", "--cache-dir", cache, "-o", filepath.Join(cache, "o.jsonl")}, extra...)
	}
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{predict("--iterations", "-1"), "--iterations"},
		{predict("--iterations", "1", "--draft-endpoint", "http://127.0.0.1:1/v1"), "--draft-endpoint needs --iterations 2 or more"},
		{predict("--iterations", "2", "--draft-model", "m"), "--draft-model needs --draft-endpoint"},
		{predict("--iterations", "2", "--draft-endpoint", "localhost:1"), "--draft-endpoint must be the base URL"},
		{predict("--iterations", "2", "--draft-endpoint", "http://127.0.0.1:1/v1", "--fim-template", "gpt4"), `unknown FIM template "gpt4"`},
		{[]string{"eval", "--data", sample, "--lang", "python", "--stage", "sample", "--cache-dir", cache, "--iterations", "1", "--draft-endpoint", "http://127.0.0.1:1/v1"}, "--draft-endpoint needs --iterations"},
	} {
		code, _, stderr := run(t, tc.args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d (%q)", tc.args, code, exitUsage, stderr)
			continue
		}
		oneLine(t, strings.Join(tc.args, " "), stderr, regexp.MustCompile(regexp.QuoteMeta(tc.msg)))
	}
}

// TestPredictDraftEndpoint: predict drafts with the endpoint's model; when the
// endpoint fails, every datapoint still gets its context (the built-in drafter's
// round), the failures are counted in the summary line and the exit status is 0.
func TestPredictDraftEndpoint(t *testing.T) {
	cache := t.TempDir()
	data, err := os.ReadFile(filepath.Join(sample, "python-sample.jsonl"))
	must(t, err)
	n := strings.Count(strings.TrimSpace(string(data)), "\n") + 1
	for _, tc := range []struct {
		name   string
		status int
		failed int
	}{
		{"ok", http.StatusOK, 0},
		{"503", http.StatusServiceUnavailable, n},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ep := newFakeEndpoint(t, tc.status, "total = parse_amount(value)")
			out := filepath.Join(cache, tc.name+".jsonl")
			code, _, stderr := run(t, "predict", "--data", sample, "--lang", "python", "--stage", "sample", "--cache-dir", cache, "-o", out,
				"--iterations", "2", "--draft-endpoint", ep.url(), "--draft-model", "fake", "--endpoint-retries", "0", "--dense", "none")
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			want := draftSummary(n, tc.failed)
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}
			lines, err := os.ReadFile(out)
			must(t, err)
			if got := strings.Count(string(lines), "\n"); got != n {
				t.Errorf("%d prediction lines, want %d", got, n)
			}
			if p := ep.last(t); !strings.HasPrefix(p, "<|repo_name|>") && !strings.Contains(p, "<|fim_prefix|>") {
				t.Errorf("draft prompt is not qwen2.5's: %.80q", p)
			}
		})
	}
}

// TestEvalDraftNote: eval reports the drafts of the current configuration.
func TestEvalDraftNote(t *testing.T) {
	ep := newFakeEndpoint(t, http.StatusInternalServerError, "")
	code, out, stderr := run(t, "eval", "--data", sample, "--lang", "python", "--stage", "sample", "--cache-dir", t.TempDir(), "--dense", "none",
		"--iterations", "2", "--draft-endpoint", ep.url(), "--endpoint-retries", "0")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"--iterations 2 ", "--draft-endpoint " + ep.url() + " --draft-model  --fim-template qwen2.5", "current: ", "drafts asked of the draft model", "failed (the built-in drafter's were used for those)"} {
		if !strings.Contains(out, want) {
			t.Errorf("eval output lacks %q:\n%s", want, out)
		}
	}
}
