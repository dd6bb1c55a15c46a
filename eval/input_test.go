package eval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadPredictions(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "p.jsonl", `{"context":"a"}`+"\r\n"+
		`{"context":"","prefix":"P","suffix":null,"extra":1}`+"\n"+
		`{"context":"c","suffix":""}`+"\n\n")
	preds, err := ReadPredictions(p, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(preds) != 3 || preds[0].Context != "a" || preds[0].Prefix != nil ||
		preds[1].Prefix == nil || *preds[1].Prefix != "P" || preds[1].Suffix != nil ||
		preds[2].Suffix == nil || *preds[2].Suffix != "" {
		t.Errorf("got %+v", preds)
	}
	for _, tc := range []struct {
		name, text string
		want       int
		msg        string
	}{
		{"short.jsonl", `{"context":"a"}` + "\n", 2, "short.jsonl: 1 lines, want 2"},
		{"long.jsonl", `{"context":"a"}` + "\n" + `{"context":"b"}` + "\n", 1, "long.jsonl: 2 lines, want 1"},
		{"blank.jsonl", `{"context":"a"}` + "\n\n" + `{"context":"b"}` + "\n", 3, "blank.jsonl:2: blank line"},
		{"json.jsonl", `{"context":"a"}` + "\n" + `{"context":` + "\n", 2, "json.jsonl:2: not a JSON object"},
		{"array.jsonl", `["a"]` + "\n", 1, "array.jsonl:1: not a JSON object"},
		{"noctx.jsonl", `{"prefix":"a"}` + "\n", 1, `noctx.jsonl:1: no "context" key`},
		{"nullctx.jsonl", `{"context":null}` + "\n", 1, `nullctx.jsonl:1: "context" is not a string`},
		{"numctx.jsonl", `{"context":3}` + "\n", 1, `numctx.jsonl:1: "context" is not a string`},
		{"badprefix.jsonl", `{"context":"","prefix":[1]}` + "\n", 1, `badprefix.jsonl:1: "prefix" is not a string`},
	} {
		p := writeFile(t, dir, tc.name, tc.text)
		_, err := ReadPredictions(p, tc.want)
		if err == nil || !strings.HasPrefix(err.Error(), "eval: ") || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.msg)
		}
	}
	if _, err := ReadPredictions(filepath.Join(dir, "none.jsonl"), 1); err == nil || !strings.Contains(err.Error(), "eval: predictions: open") {
		t.Errorf("missing file: %v", err)
	}
}
