package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/complete"
	"github.com/repoctx/repoctx/dataset"
)

// fakeModel serves /v1/completions: it answers a middle the prompt's context
// shows, fails with a 500 for prompts holding "FAIL", and answers "" otherwise.
func fakeModel(t *testing.T, middles []string, calls *atomic.Int32) *complete.Model {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var req struct{ Prompt string }
		json.NewDecoder(r.Body).Decode(&req)
		if strings.Contains(req.Prompt, "FAIL") {
			http.Error(w, "model crashed", http.StatusInternalServerError)
			return
		}
		text := ""
		for _, m := range middles {
			if strings.Contains(req.Prompt, "<|file_sep|>m.py\n"+m) {
				text = m
			}
		}
		fmt.Fprintf(w, `{"choices":[{"text":%q,"finish_reason":"stop"}]}`, text)
	}))
	t.Cleanup(srv.Close)
	o := complete.DefaultOptions()
	o.Retries, o.Backoff, o.Timeout = 1, time.Millisecond, 5*time.Second
	c, err := complete.NewClient(srv.URL+"/v1", o)
	if err != nil {
		t.Fatal(err)
	}
	q, _ := complete.LookupTemplate("qwen2.5")
	return &complete.Model{Client: c, Name: "fake", Template: q}
}

func TestRunModel(t *testing.T) {
	dir := sampleCopy(t)
	dps, _, _ := dataset.ReadDatapointsFile(filepath.Join(dir, "python-sample.jsonl"))
	truth, _ := dataset.ReadTruth(filepath.Join(dir, "python-sample.truth.jsonl"))
	var middles []string
	for _, d := range dps {
		middles = append(middles, truth[d.ID].Middle)
	}
	lines := []string{
		// 0 and 1: the middle as context: the fake model copies it.
		string(dataset.PredictionLine(repoctx.FileSep+"m.py\n"+middles[0], nil, nil)),
		string(dataset.PredictionLine(repoctx.FileSep+"m.py\n"+middles[1], nil, nil)),
		// 2: the model fails on this prompt (after its retry).
		string(dataset.PredictionLine(repoctx.FileSep+"x.py\nFAIL\n", nil, nil)),
		// 3: empty: the model answers "".
		string(dataset.PredictionLine("", nil, nil)),
	}
	p := writeFile(t, dir, "mine.jsonl", strings.Join(lines, "\n")+"\n")
	var calls atomic.Int32
	opts := Options{DataDir: dir, Lang: "python", Stage: "sample", Predictions: []string{p}, Configs: []string{ConfigEmpty},
		Model: fakeModel(t, middles, &calls)}
	rep, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, rep, 4, []string{"mine", "empty"})
	mine, empty := rep.Configs[0], rep.Configs[1]
	full, w8, w16 := 0, 1, 2
	for _, k := range []int{w8, w16} {
		for i, want := range []float64{1, 1, 0, 0} {
			s := mine.PerDatapoint[i].Settings[k]
			if s.ModelChrF == nil || *s.ModelChrF != want {
				t.Errorf("mine, datapoint %d, %s: model_chrf %v, want %v", i, rep.Settings[k].Name, s.ModelChrF, want)
			}
		}
		if s := mine.PerDatapoint[0].Settings[k]; s.Completion != middles[0] {
			t.Errorf("completion %q", s.Completion)
		}
		if s := mine.PerDatapoint[2].Settings[k]; !strings.Contains(s.ModelError, "HTTP 500: model crashed (2 attempts)") {
			t.Errorf("failed request: %q", s.ModelError)
		}
		if m := mine.Scores[k].ModelChrF; m == nil || *m != 0.5 {
			t.Errorf("mine %s: mean model_chrf %v, want 0.5", rep.Settings[k].Name, m)
		}
		if m := empty.Scores[k].ModelChrF; m == nil || *m != 0 {
			t.Errorf("empty %s: mean model_chrf %v, want 0", rep.Settings[k].Name, m)
		}
	}
	if mine.Scores[full].ModelChrF != nil || mine.PerDatapoint[0].Settings[full].ModelChrF != nil {
		t.Error("the untrimmed setting has model_chrf: it has no window")
	}
	if mine.ModelFailed != 2 || empty.ModelFailed != 0 {
		t.Errorf("model failures %d and %d, want 2 (one datapoint, two windows) and 0", mine.ModelFailed, empty.ModelFailed)
	}
	// Identical prompts are asked once: both windows keep everything, so mine
	// has 4 prompts (the failing one asked twice) and empty 3 more (its last
	// datapoint's prompt is mine's last).
	if n := calls.Load(); n != 4+1+3 {
		t.Errorf("%d requests, want 8", n)
	}
	var out bytes.Buffer
	if err := rep.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"model_chrf: chrF of the model's completion", "[2 model requests failed and scored 0]", "model_chrf: chrF of fake's completions (via http://"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}

	// When every request fails, Run fails.
	lines = []string{
		string(dataset.PredictionLine(repoctx.FileSep+"x.py\nFAIL\n", nil, nil)),
	}
	p = writeFile(t, dir, "bad.jsonl", strings.Repeat(lines[0]+"\n", 4))
	opts.Predictions, opts.Configs = []string{p}, nil
	_, err = Run(context.Background(), opts)
	if err == nil || !strings.Contains(err.Error(), "eval: model completions: all 4 requests failed; the last: complete: POST") {
		t.Errorf("all failing: %v", err)
	}
}
