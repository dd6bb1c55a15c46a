package dataset

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestReadTruth(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := write("ok.truth.jsonl", `{"id": "a-1", "middle": "x = 1\n", "commit": "c1", "kind": "insert"}`+"\n\n"+
		`{"id": "b-2", "middle": "", "commit": "c2", "kind": "replace", "extra": [1]}`+"\r\n")
	m, err := ReadTruth(p)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Truth{
		"a-1": {ID: "a-1", Middle: "x = 1\n", Commit: "c1", Kind: "insert"},
		"b-2": {ID: "b-2", Middle: "", Commit: "c2", Kind: "replace"},
	}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("got %+v, want %+v", m, want)
	}
	for _, tc := range []struct{ name, body, want string }{
		{"malformed", `{"id":"a","middle":"x"}` + "\n" + `{"id":`, "bad.truth.jsonl:2: malformed JSON"},
		{"missing id", `{"middle":"x"}`, "bad.truth.jsonl:1: missing id"},
		{"repeated id", `{"id":"a"}` + "\n\n" + `{"id":"a"}`, "bad.truth.jsonl:3: datapoint a: id repeated"},
		{"wrong type", `{"id":"a","middle":3}`, "bad.truth.jsonl:1: malformed JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadTruth(write("bad.truth.jsonl", tc.body))
			mustContain(t, err, tc.want)
		})
	}
	_, err = ReadTruth(filepath.Join(dir, "none.jsonl"))
	mustContain(t, err, "none.jsonl")
}
