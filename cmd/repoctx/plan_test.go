package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPredictPlanWindow: predict writes "prefix" overrides (trimmed prefixes, whole
// lines nearest the cursor) when --plan-window is set and trimming is needed, and no
// overrides without it; --tokenizer loads a Hugging Face tokenizer.json for it.
func TestPredictPlanWindow(t *testing.T) {
	cache := t.TempDir()
	var dps []map[string]any
	raw, err := os.ReadFile("../../testdata/sample/python-sample.jsonl")
	must(t, err)
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var d map[string]any
		must(t, json.Unmarshal([]byte(l), &d))
		dps = append(dps, d)
	}
	predictLines := func(extra ...string) []map[string]any {
		t.Helper()
		out := filepath.Join(t.TempDir(), "out.jsonl")
		args := append([]string{"predict", "--data", "../../testdata/sample", "--lang", "python", "--stage", "sample",
			"-o", out, "-q", "--dense", "none", "--cache-dir", cache}, extra...)
		if code, _, stderr := run(t, args...); code != exitOK {
			t.Fatalf("%v: exit %d: %s", extra, code, stderr)
		}
		var lines []map[string]any
		for _, l := range outputLines(t, out) {
			var v map[string]any
			must(t, json.Unmarshal([]byte(l), &v))
			lines = append(lines, v)
		}
		return lines
	}
	for i, v := range predictLines() {
		if _, ok := v["prefix"]; ok {
			t.Errorf("line %d: prefix override without --plan-window", i+1)
		}
		if _, ok := v["suffix"]; ok {
			t.Errorf("line %d: suffix override without --plan-window", i+1)
		}
	}
	for _, extra := range [][]string{
		{"--plan-window", "1000"},
		{"--plan-window", "1000", "--tokenizer", "../../testdata/models/tiny-bert/tokenizer.json"},
	} {
		trimmed := 0
		for i, v := range predictLines(extra...) {
			p, ok := v["prefix"].(string)
			if !ok {
				continue
			}
			trimmed++
			full := dps[i]["prefix"].(string)
			if !strings.HasSuffix(full, p) || len(p) >= len(full) || full[len(full)-len(p)-1] != '\n' {
				t.Errorf("%v: line %d: prefix override is not the last whole lines of the prefix", extra, i+1)
			}
			if v["context"] == "" {
				t.Errorf("%v: line %d: trimmed prefix but empty context", extra, i+1)
			}
		}
		if trimmed == 0 {
			t.Errorf("%v: no prefix trimmed", extra)
		}
	}
	// The planner flags' defaults (0) may be given with the planner off; another value may not.
	for _, flags := range [][]string{{"--plan-window", "0", "--plan-share", "0", "--plan-context-window", "0"}, {"--plan-window", "0", "--plan-context-window", "16000"}} {
		args := append([]string{"predict", "--data", "../../testdata/sample", "--lang", "python", "--stage", "sample", "-o", "-", "-q", "--cache-dir", t.TempDir()}, flags...)
		code, _, stderr := run(t, args...)
		if want := flags[len(flags)-1] == "0"; (code == 0) != want {
			t.Errorf("%v: exit %d, stderr %q (success wanted: %v)", flags, code, stderr, want)
		}
	}
	for _, bad := range [][]string{{"--plan-window", "300"}, {"--plan-window", "-1"}, {"--plan-window", "8000", "--plan-share", "-0.5"}, {"--plan-window", "8000", "--plan-suffix-share", "2"}} {
		args := append([]string{"predict", "--data", "../../testdata/sample", "--lang", "python", "--stage", "sample", "-o", "-", "-q"}, bad...)
		if code, _, stderr := run(t, args...); code != exitUsage || !strings.Contains(stderr, "--plan-") {
			t.Errorf("%v: exit %d, stderr %q; want a usage error", bad, code, stderr)
		}
	}
}
