package dataset

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// multiRepoSample copies the Python sample into a dataset of four repositories (the
// sample's two snapshots under four names each), so that shards have work.
func multiRepoSample(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(sampleDir, "repositories-python-sample")
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(sampleDir, "python-sample.jsonl"))
	var out bytes.Buffer
	for _, repo := range []string{"acme/invoicing", "acme/billing", "beta/ledger", "gamma/tax"} {
		for _, e := range ents {
			rev := e.Name()[strings.LastIndexByte(e.Name(), '-')+1:]
			dst := filepath.Join(dir, "repositories-python-mix", strings.ReplaceAll(repo, "/", "__")+"-"+rev)
			os.MkdirAll(filepath.Dir(dst), 0o755)
			if err := exec.Command("cp", "-r", filepath.Join(src, e.Name()), dst).Run(); err != nil {
				t.Fatal(err)
			}
		}
		for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
			var d map[string]any
			json.Unmarshal([]byte(l), &d)
			d["repo"] = repo
			d["id"] = repo + "/" + d["id"].(string)
			b, _ := json.Marshal(d)
			out.Write(append(b, '\n'))
		}
	}
	os.WriteFile(filepath.Join(dir, "python-mix.jsonl"), out.Bytes(), 0o644)
	return dir
}

// TestShardsMerge: shards 1/3, 2/3 and 3/3 hold every datapoint once, a repository in
// one shard only, and merged they are byte-identical to an unsharded run; merge
// refuses a missing shard and a shard given twice.
func TestShardsMerge(t *testing.T) {
	dir := multiRepoSample(t)
	c := cfg(t, 0)
	whole := filepath.Join(t.TempDir(), "whole.jsonl")
	if _, err := Predict(context.Background(), PredictOptions{DataDir: dir, Lang: "python", Stage: "mix", Out: whole, Batch: c}); err != nil {
		t.Fatal(err)
	}
	var shards []string
	total := 0
	for i := 1; i <= 3; i++ {
		out := filepath.Join(t.TempDir(), "shard.jsonl")
		sum, err := Predict(context.Background(), PredictOptions{DataDir: dir, Lang: "python", Stage: "mix", Out: out, Batch: c, Shard: Shard{I: i, N: 3}})
		if err != nil {
			t.Fatal(err)
		}
		total += sum.Datapoints
		shards = append(shards, out)
	}
	if total != 16 {
		t.Errorf("shards hold %d datapoints, want 16", total)
	}
	merged := filepath.Join(t.TempDir(), "merged.jsonl")
	if n, err := Merge(dir, "python", "mix", merged, shards); err != nil || n != 16 {
		t.Fatalf("Merge: %d, %v", n, err)
	}
	a, _ := os.ReadFile(whole)
	b, _ := os.ReadFile(merged)
	if !bytes.Equal(a, b) {
		t.Errorf("merged shards differ from the unsharded output")
	}
	if _, err := Merge(dir, "python", "mix", merged, shards[:2]); err == nil || !strings.Contains(err.Error(), "have no line") {
		t.Errorf("a missing shard: %v", err)
	}
	if _, err := Merge(dir, "python", "mix", merged, append(shards, shards[0])); err == nil || !strings.Contains(err.Error(), "has a line in") {
		t.Errorf("a shard given twice: %v", err)
	}
	if _, err := Merge(dir, "python", "mix", merged, []string{whole}); err == nil || !strings.Contains(err.Error(), "not the output of predict --shard") {
		t.Errorf("an unsharded output: %v", err)
	}
	// Shards of another datapoint file (here: the same one reordered) are refused.
	other := t.TempDir()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Name() != "python-mix.jsonl" {
			abs, _ := filepath.Abs(filepath.Join(dir, e.Name()))
			if err := os.Symlink(abs, filepath.Join(other, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "python-mix.jsonl"))
	if err := os.WriteFile(filepath.Join(other, "python-mix.jsonl"), append(raw, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Merge(other, "python", "mix", merged, shards); err == nil || !strings.Contains(err.Error(), "another datapoint file") {
		t.Errorf("shards of another datapoint file: %v", err)
	}
	if _, err := ParseShard("4/3"); err == nil {
		t.Error("shard 4/3 accepted")
	}
}
