package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/repoctx/repoctx/eval"
)

// TestEvalOracleAndPaired runs eval with a named predictions file, bm25file and
// the oracle: the JSON has the rows, the headroom and the paired comparisons
// against --compare-to; the tables print them.
func TestEvalOracleAndPaired(t *testing.T) {
	dir := t.TempDir()
	preds := filepath.Join(dir, "python-x.jsonl")
	must(t, os.WriteFile(preds, []byte(strings.Repeat(`{"context":""}`+"\n", 4)), 0o644))
	args := []string{"eval", "--data", sample, "--lang", "python", "--stage", "sample", "--cache-dir", t.TempDir(),
		"--predictions", "mine=" + preds, "--config", "bm25file,oracle,windows-old", "--compare-to", "mine", "--window", "8000"}
	code, out, stderr := run(t, append(args, "--json")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep eval.Report
	must(t, json.Unmarshal([]byte(out), &rep))
	var names []string
	for _, c := range rep.Configs {
		names = append(names, c.Name)
	}
	if strings.Join(names, " ") != "mine bm25file oracle windows-old" || !rep.Configs[2].Oracle {
		t.Errorf("rows %q", names)
	}
	if rep.Paired == nil || rep.Paired.Reference != "mine" || len(rep.Paired.Configs) != 3 || rep.Paired.Resamples != 2000 {
		t.Fatalf("paired %+v", rep.Paired)
	}
	if d := rep.Paired.Configs[1].Settings[0].LineChrF; d == nil || d.Verdict == "" || d.Lo > d.Mean || d.Mean > d.Hi {
		t.Errorf("oracle vs mine, line_chrf: %+v", d)
	}
	code, out, stderr = run(t, args...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"headroom captured, idrec / line_chrf", "paired differences against mine", "windows-old", "oracle  "} {
		if !strings.Contains(out, want) {
			t.Errorf("tables lack %q:\n%s", want, out)
		}
	}
}
