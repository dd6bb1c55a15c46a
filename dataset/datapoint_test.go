package dataset

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestReadDatapointsValid(t *testing.T) {
	big := strings.Repeat("x", 5<<20) // longer than any bufio.Scanner default
	input := "\xef\xbb\xbf" +
		`{"id":"a-1","repo":"owner/name","revision":"abc123","path":"src/a.py","modified":["src/a.py","b.py"],"prefix":"p","suffix":"s","archived":false}` + "\r\n" +
		"\n" +
		"   \t\n" +
		`{"repo":"MaterialsDiscovery/PyChemia","revision":"dee8","path":"./x//y.py","prefix":"","suffix":"tail"}` + "\n" +
		`{"id":17,"repo":"o.o/n_n-1","revision":"r","path":"a\\b.py","prefix":"` + big + `","suffix":""}` + "\n" +
		`{"id":"both-empty","repo":"o/n","revision":"r","path":"__init__.py","prefix":"","suffix":""}` // no final newline
	dps, errs, err := ReadDatapoints(strings.NewReader(input), "t.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	want := []Datapoint{
		{ID: "a-1", Repo: "owner/name", Revision: "abc123", Path: "src/a.py", Modified: []string{"src/a.py", "b.py"}, Prefix: "p", Suffix: "s", Line: 1},
		{Repo: "MaterialsDiscovery/PyChemia", Revision: "dee8", Path: "x/y.py", Suffix: "tail", Line: 4},
		{ID: "17", Repo: "o.o/n_n-1", Revision: "r", Path: `a\b.py`, Prefix: big, Line: 5},
		{ID: "both-empty", Repo: "o/n", Revision: "r", Path: "__init__.py", Line: 6},
	}
	if len(dps) != len(want) || len(errs) != len(want) {
		t.Fatalf("got %d datapoints and %d errors, want %d", len(dps), len(errs), len(want))
	}
	for i := range want {
		if errs[i] != nil {
			t.Errorf("line %d: unexpected error %v", want[i].Line, errs[i])
		}
		if !reflect.DeepEqual(dps[i], want[i]) {
			t.Errorf("datapoint %d:\n got %+v\nwant %+v", i, short(dps[i]), short(want[i]))
		}
	}
	if got := dps[0].SnapshotName(); got != "owner__name-abc123" {
		t.Errorf("SnapshotName = %q", got)
	}
}

func short(d Datapoint) Datapoint {
	if len(d.Prefix) > 20 {
		d.Prefix = d.Prefix[:20] + "..."
	}
	return d
}

func TestSnapshotName(t *testing.T) {
	for _, tc := range []struct{ repo, rev, want string }{
		{"square/moshi", "110c863d", "square__moshi-110c863d"},
		{"MaterialsDiscovery/PyChemia", "dee8d4f6", "MaterialsDiscovery__PyChemia-dee8d4f6"},
		{"a-b/c.d", "v1.0", "a-b__c.d-v1.0"},
	} {
		d := Datapoint{Repo: tc.repo, Revision: tc.rev}
		if got := d.SnapshotName(); got != tc.want {
			t.Errorf("SnapshotName(%q, %q) = %q, want %q", tc.repo, tc.rev, got, tc.want)
		}
	}
}

func TestReadDatapointsValidation(t *testing.T) {
	const ok = `"repo":"o/n","revision":"r","path":"a.py","prefix":"p","suffix":"s"`
	line := func(fields string) string { return "{" + fields + "}" }
	for _, tc := range []struct {
		name   string
		line   string
		wantID string
		want   string // part of the message
	}{
		{"malformed JSON", `{"id":"x","repo":`, "", "t.jsonl:2: malformed JSON"},
		{"syntax error offset", `{"id":"x","repo":"o/n" "revision"}`, "", "t.jsonl:2: malformed JSON at byte 24"},
		{"not an object", `["o/n"]`, "", "t.jsonl:2: malformed JSON"},
		{"trailing garbage", line(`"id":"x",`+ok) + ` {}`, "", "malformed JSON"},
		{"field of wrong type", line(`"id":"x","repo":"o/n","revision":"r","path":"a.py","prefix":3`), "x", "datapoint x: malformed JSON"},
		{"id of wrong type and bad field", line(`"id":[1],"repo":5,"revision":"r","path":"a.py","prefix":"p"`), "", "malformed JSON"},
		{"empty id", line(`"id":"",` + ok), "", "empty id"},
		{"id of wrong type", line(`"id":true,` + ok), "", "id is neither a string nor a number"},
		{"missing repo", line(`"id":"x","revision":"r","path":"a.py","prefix":"p"`), "x", "datapoint x: missing repo"},
		{"empty repo", line(`"id":"x","repo":"","revision":"r","path":"a.py","prefix":"p"`), "x", "missing repo"},
		{"missing revision", line(`"id":"x","repo":"o/n","path":"a.py","prefix":"p"`), "x", "missing revision"},
		{"missing path", line(`"id":"x","repo":"o/n","revision":"r","prefix":"p"`), "x", "missing path"},
		{"null path", line(`"id":"x","repo":"o/n","revision":"r","path":null,"prefix":"p"`), "x", "missing path"},
		{"no prefix nor suffix", line(`"id":"x","repo":"o/n","revision":"r","path":"a.py"`), "x", "missing both prefix and suffix"},
		{"repo without slash", line(`"id":"x","repo":"name","revision":"r","path":"a.py","prefix":"p"`), "x", "not of the form owner/name"},
		{"repo with two slashes", line(`"id":"x","repo":"a/b/c","revision":"r","path":"a.py","prefix":"p"`), "x", "not of the form owner/name"},
		{"repo with dotdot", line(`"id":"x","repo":"../etc","revision":"r","path":"a.py","prefix":"p"`), "x", "not of the form owner/name"},
		{"repo with empty owner", line(`"id":"x","repo":"/n","revision":"r","path":"a.py","prefix":"p"`), "x", "not of the form owner/name"},
		{"revision with slash", line(`"id":"x","repo":"o/n","revision":"../../r","path":"a.py","prefix":"p"`), "x", "revision"},
		{"absolute path", line(`"id":"x","repo":"o/n","revision":"r","path":"/etc/passwd","prefix":"p"`), "x", "absolute path"},
		{"backslash absolute path", line(`"id":"x","repo":"o/n","revision":"r","path":"\\etc\\passwd","prefix":"p"`), "x", "absolute path"},
		{"drive letter", line(`"id":"x","repo":"o/n","revision":"r","path":"C:\\x.py","prefix":"p"`), "x", "drive letter"},
		{"dotdot element", line(`"id":"x","repo":"o/n","revision":"r","path":"a/../../x.py","prefix":"p"`), "x", ".. element"},
		{"backslash escape", line(`"id":"x","repo":"o/n","revision":"r","path":"a\\..\\..\\x.py","prefix":"p"`), "x", ".. element"},
		{"dotdot that cleans inside", line(`"id":"x","repo":"o/n","revision":"r","path":"a/../x.py","prefix":"p"`), "x", ".. element"},
		{"only dots", line(`"id":"x","repo":"o/n","revision":"r","path":"./.","prefix":"p"`), "x", "empty path"},
		{"NUL byte", line(`"id":"x","repo":"o/n","revision":"r","path":"a\u0000.py","prefix":"p"`), "x", "NUL byte"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			input := line(`"id":"good",`+ok) + "\n" + tc.line + "\n" + line(`"id":"after",`+ok) + "\n"
			dps, errs, err := ReadDatapoints(strings.NewReader(input), "t.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			if len(dps) != 3 || len(errs) != 3 {
				t.Fatalf("got %d datapoints, %d errors, want 3 of each", len(dps), len(errs))
			}
			if errs[0] != nil || errs[2] != nil || dps[0].ID != "good" || dps[2].ID != "after" || dps[2].Line != 3 {
				t.Fatalf("neighbour lines affected: %v %v %+v", errs[0], errs[2], dps[2])
			}
			mustContain(t, errs[1], "t.jsonl:2: ", tc.want)
			var de *DatapointError
			if !errors.As(errs[1], &de) {
				t.Fatalf("error %T is not a *DatapointError", errs[1])
			}
			if de.File != "t.jsonl" || de.Line != 2 || de.ID != tc.wantID {
				t.Errorf("DatapointError = %+v, want line 2, id %q", de, tc.wantID)
			}
			if want := (Datapoint{Line: 2, ID: tc.wantID}); !reflect.DeepEqual(dps[1], want) {
				t.Errorf("bad line gave %+v, want %+v", dps[1], want)
			}
		})
	}
}

func TestDatapointErrorFormat(t *testing.T) {
	e := &DatapointError{File: "f.jsonl", Line: 7, ID: "x-1", Err: errors.New("missing path")}
	if got, want := e.Error(), "dataset: f.jsonl:7: datapoint x-1: missing path"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	e.ID = ""
	if got, want := e.Error(), "dataset: f.jsonl:7: missing path"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestReadDatapointsLineTooLong(t *testing.T) {
	old := maxLineBytes
	maxLineBytes = 100
	defer func() { maxLineBytes = old }()
	ok := `{"id":"a","repo":"o/n","revision":"r","path":"a.py","prefix":"p"}`
	input := ok + "\n" + `{"id":"b","prefix":"` + strings.Repeat("y", 200<<10) + `"}` + "\n" + ok
	dps, errs, err := ReadDatapoints(strings.NewReader(input), "t.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(dps) != 3 || errs[0] != nil || errs[2] != nil || dps[2].Line != 3 {
		t.Fatalf("got %d datapoints, errors %v", len(dps), errs)
	}
	mustContain(t, errs[1], "t.jsonl:2: line longer than 100 bytes")
}

type failingReader struct {
	data string
	done bool
}

func (r *failingReader) Read(p []byte) (int, error) {
	if r.done {
		return 0, errors.New("disk on fire")
	}
	r.done = true
	return copy(p, r.data), nil
}

func TestReadDatapointsIOError(t *testing.T) {
	ok := `{"id":"a","repo":"o/n","revision":"r","path":"a.py","prefix":"p"}`
	dps, _, err := ReadDatapoints(&failingReader{data: ok + "\n"}, "t.jsonl")
	mustContain(t, err, "t.jsonl", "disk on fire")
	if len(dps) != 1 || dps[0].ID != "a" {
		t.Errorf("datapoints read before the failure: %+v", dps)
	}
}

func TestReadDatapointsManyLines(t *testing.T) {
	var b strings.Builder
	for i := range 1000 {
		if i%7 == 3 {
			b.WriteString("not json\n")
			continue
		}
		fmt.Fprintf(&b, `{"id":"d%d","repo":"o/n","revision":"r","path":"a.py","suffix":"s"}`+"\n", i)
	}
	dps, errs, err := ReadDatapoints(io.MultiReader(strings.NewReader(b.String())), "t.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(dps) != 1000 {
		t.Fatalf("got %d datapoints, want 1000", len(dps))
	}
	for i, d := range dps {
		if d.Line != i+1 {
			t.Fatalf("datapoint %d has Line %d", i, d.Line)
		}
		if (errs[i] != nil) != (i%7 == 3) {
			t.Fatalf("line %d: error %v", i+1, errs[i])
		}
		if errs[i] == nil && d.ID != fmt.Sprintf("d%d", i) {
			t.Fatalf("line %d: id %q", i+1, d.ID)
		}
	}
}
