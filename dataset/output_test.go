package dataset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/repoctx/repoctx/internal/racetest"
)

func TestPredictionLine(t *testing.T) {
	ptr := func(s string) *string { return &s }
	for _, tc := range []struct {
		name           string
		ctx            string
		prefix, suffix *string
		want           string
	}{
		{"context only", "a", nil, nil, `{"context":"a"}`},
		{"empty context", "", nil, nil, `{"context":""}`},
		{"no HTML escaping", "<a href=\"x\">&</a>", nil, nil, `{"context":"<a href=\"x\">&</a>"}`},
		{"control characters", "l1\nl2\t\x00\r", nil, nil, `{"context":"l1\nl2\t\u0000\r"}`},
		{"unicode kept", "é — 中", nil, nil, `{"context":"é — 中"}`},
		{"invalid UTF-8 replaced", "a\xffb", nil, nil, `{"context":"a\ufffdb"}`},
		{"prefix and suffix", "c", ptr("p"), ptr("s"), `{"context":"c","prefix":"p","suffix":"s"}`},
		{"prefix only", "c", ptr(""), nil, `{"context":"c","prefix":""}`},
		{"suffix only", "c", nil, ptr("}\n"), `{"context":"c","suffix":"}\n"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := PredictionLine(tc.ctx, tc.prefix, tc.suffix)
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			if !json.Valid(got) || checkLine(got) != nil {
				t.Errorf("not a valid output line: %s", got)
			}
		})
	}
}

// lineFor is the output line of index i used by these tests.
func lineFor(i int) []byte {
	ctx := fmt.Sprintf("context of %d <&> \u2028 é", i)
	if i%3 == 0 {
		p := fmt.Sprintf("prefix %d\n", i)
		return PredictionLine(ctx, &p, nil)
	}
	return PredictionLine(ctx, nil, nil)
}

// filled returns an Output of n lines to out with every line put (lineFor), not
// finished.
func filled(t *testing.T, out string, n int) *Output {
	t.Helper()
	o, err := CreateOutput(out, n, false)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := o.Put(i, lineFor(i)); err != nil {
			t.Fatal(err)
		}
	}
	return o
}

// reference writes n lines without interruption and returns the file's bytes.
func reference(t *testing.T, n int) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "ref.jsonl")
	o := filled(t, out, n)
	if err := o.Finish(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestOutputBasic(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "pred.jsonl")
	os.WriteFile(out, []byte("old content\n"), 0o644)
	o, err := CreateOutput(out, 3, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{2, 0, 1} {
		if err := o.Put(i, []byte(fmt.Sprintf(`{"context":"%d"}`, i))); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(out); string(b) != "old content\n" {
		t.Errorf("OUT changed before Finish: %q", b)
	}
	if _, err := os.Stat(out + ".partial"); err != nil {
		t.Errorf("no journal while running: %v", err)
	}
	if err := o.Finish(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\"context\":\"0\"}\n{\"context\":\"1\"}\n{\"context\":\"2\"}\n"; string(b) != want {
		t.Errorf("got %q, want %q", b, want)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("folder holds %q, want only the output (journal and temp files removed)", names)
	}
	if fi, _ := os.Stat(out); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", fi.Mode())
	}
	if err := o.Put(0, []byte(`{}`)); err == nil {
		t.Error("Put after Finish succeeded")
	}
	if err := o.Finish(); err == nil {
		t.Error("second Finish succeeded")
	}
	if err := o.Abort(); err != nil {
		t.Errorf("Abort after Finish: %v", err)
	}
}

func TestOutputEmpty(t *testing.T) {
	out := filepath.Join(t.TempDir(), "pred.jsonl")
	o, err := CreateOutput(out, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Finish(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(out); err != nil || len(b) != 0 {
		t.Errorf("got %q, %v", b, err)
	}
}

func TestOutputPutErrors(t *testing.T) {
	out := filepath.Join(t.TempDir(), "pred.jsonl")
	o, err := CreateOutput(out, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Abort()
	if err := o.Put(0, []byte(`{"context":""}`)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		i    int
		line string
		want string
	}{
		{"negative index", -1, `{}`, "out of range"},
		{"index n", 2, `{}`, "out of range"},
		{"already written", 0, `{}`, "already has a line"},
		{"empty line", 1, ``, "empty line"},
		{"newline", 1, "{}\n", "line break"},
		{"carriage return", 1, "{\r}", "line break"},
		{"invalid JSON", 1, `{"context":`, "not valid JSON"},
		{"invalid UTF-8", 1, "{\"context\":\"\xff\"}", "not valid UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mustContain(t, o.Put(tc.i, []byte(tc.line)), out, tc.want)
		})
	}
	if o.Done(1) || !o.Done(0) || o.Done(-1) || o.Done(2) {
		t.Error("Done is wrong after refused Puts")
	}
}

func TestOutputMissingLines(t *testing.T) {
	out := filepath.Join(t.TempDir(), "pred.jsonl")
	o, err := CreateOutput(out, 4, false)
	if err != nil {
		t.Fatal(err)
	}
	o.Put(0, lineFor(0))
	o.Put(3, lineFor(3))
	if o.Missing() != 2 {
		t.Errorf("Missing = %d", o.Missing())
	}
	mustContain(t, o.Finish(), out, "2 of 4 datapoints have no line", "first missing: index 1")
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("OUT written despite missing lines: %v", err)
	}
	if _, err := os.Stat(out + ".partial"); err != nil {
		t.Errorf("journal gone after a failed Finish: %v", err)
	}
	o.Put(1, lineFor(1))
	o.Put(2, lineFor(2))
	if err := o.Finish(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); !bytes.Equal(b, reference(t, 4)) {
		t.Errorf("got %q", b)
	}
}

func TestOutputResume(t *testing.T) {
	const n = 40
	want := reference(t, n)
	for _, k := range []int{0, 1, 17, n - 1, n} {
		for _, abort := range []bool{true, false} {
			t.Run(fmt.Sprintf("after %d lines, abort %v", k, abort), func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "pred.jsonl")
				o, err := CreateOutput(out, n, false)
				if err != nil {
					t.Fatal(err)
				}
				order := rand.New(rand.NewPCG(uint64(k), 1)).Perm(n)
				for _, i := range order[:k] {
					if err := o.Put(i, lineFor(i)); err != nil {
						t.Fatal(err)
					}
				}
				if abort {
					if err := o.Abort(); err != nil {
						t.Fatal(err)
					}
				} // else: the process "crashed" with the journal open
				o2, err := CreateOutput(out, n, true)
				if err != nil {
					t.Fatal(err)
				}
				done := map[int]bool{}
				for _, i := range order[:k] {
					done[i] = true
				}
				for i := range n {
					if o2.Done(i) != done[i] {
						t.Fatalf("Done(%d) = %v, want %v", i, o2.Done(i), done[i])
					}
					if !done[i] {
						if err := o2.Put(i, lineFor(i)); err != nil {
							t.Fatal(err)
						}
					}
				}
				if err := o2.Finish(); err != nil {
					t.Fatal(err)
				}
				got, _ := os.ReadFile(out)
				if !bytes.Equal(got, want) {
					t.Errorf("resumed output differs from an uninterrupted run")
				}
			})
		}
	}
}

func TestOutputResumeTwice(t *testing.T) {
	const n = 10
	out := filepath.Join(t.TempDir(), "pred.jsonl")
	for round := range 3 {
		o, err := CreateOutput(out, n, round > 0)
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if !o.Done(i) && i < (round+1)*4 {
				o.Put(i, lineFor(i))
			}
		}
		if round < 2 {
			o.Abort()
			continue
		}
		if err := o.Finish(); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := os.ReadFile(out); !bytes.Equal(got, reference(t, n)) {
		t.Error("output after two resumes differs")
	}
}

// TestOutputResumeDamagedJournal: resume keeps the records that hold (in the format Put
// writes, a line as a raw JSON value, or the older one, a line as a string) and redoes
// the others.
func TestOutputResumeDamagedJournal(t *testing.T) {
	const n = 6
	want := reference(t, n)
	rec := func(i int, line string) string {
		b, _ := json.Marshal(map[string]any{"i": i, "line": line})
		return string(b) + "\n"
	}
	good := func(i int) string { return rec(i, string(lineFor(i))) }
	summed := func(i int, line string) string { // a record as Put writes it
		b, _ := json.Marshal(journalRecord{I: &i, Line: &line, Sum: lineSum(line)})
		return string(b) + "\n"
	}
	valued := func(i int, line []byte) string { return string(lineRecord(nil, i, line)) + "\n" } // as Put writes it now
	for _, tc := range []struct {
		name    string
		journal string
		done    []int
	}{
		{"truncated last line", `{"n":6}` + "\n" + good(0) + good(4) + good(2)[:17], []int{0, 4}},
		{"last line without newline", `{"n":6}` + "\n" + good(0) + strings.TrimSuffix(good(5), "\n"), []int{0, 5}},
		{"corrupt middle line", `{"n":6}` + "\n" + good(1) + "#!garbage\x00\xff\n" + good(3), []int{1, 3}},
		{"no header", good(2), []int{2}},
		{"out of range and negative", good(0) + rec(6, `{}`) + rec(-1, `{}`), []int{0}},
		{"duplicate index: first kept", good(1) + rec(1, `{"context":"other"}`), []int{1}},
		{"invalid line inside", good(0) + rec(1, "{\n}") + rec(2, `not json`) + `{"i":3}` + "\n" + `{"line":"{}"}` + "\n", []int{0}},
		{"checksums: a flipped byte is redone", `{"n":6}` + "\n" + summed(0, string(lineFor(0))) + strings.Replace(summed(1, string(lineFor(1))), `\"`, `\"X`, 1), []int{0}},
		{"empty journal", "", nil},
		{"only a torn header", `{"n":`, nil},
		{"value records: kept, flipped, unsummed, doubled", `{"n":6}` + "\n" + valued(0, lineFor(0)) + strings.Replace(valued(1, lineFor(1)), `":"`, `":"X`, 1) +
			strings.Replace(valued(2, lineFor(2)), `"sum":"`+lineSum(lineFor(2))+`",`, "", 1) +
			strings.Replace(valued(3, lineFor(3)), `"value":`, `"line":"{}","value":`, 1) + valued(4, lineFor(4)), []int{0, 4}},
		{"old and value records mixed", `{"n":6}` + "\n" + summed(1, string(lineFor(1))) + valued(2, lineFor(2)) + good(5), []int{1, 2, 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "pred.jsonl")
			if err := os.WriteFile(out+".partial", []byte(tc.journal), 0o644); err != nil {
				t.Fatal(err)
			}
			o, err := CreateOutput(out, n, true)
			if err != nil {
				t.Fatal(err)
			}
			isDone := map[int]bool{}
			for _, i := range tc.done {
				isDone[i] = true
			}
			for i := range n {
				if o.Done(i) != isDone[i] {
					t.Errorf("Done(%d) = %v, want %v", i, o.Done(i), isDone[i])
				}
			}
			// Crash again right away: the rewritten journal must hold
			// exactly the kept lines, and appends must not join a torn line.
			for i := range n {
				if !o.Done(i) {
					if err := o.Put(i, lineFor(i)); err != nil {
						t.Fatal(err)
					}
					break
				}
			}
			o.Abort()
			o, err = CreateOutput(out, n, true)
			if err != nil {
				t.Fatal(err)
			}
			for i := range n {
				if !o.Done(i) {
					o.Put(i, lineFor(i))
				}
			}
			if err := o.Finish(); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(out)
			if !bytes.Equal(got, want) {
				t.Errorf("output differs:\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func TestOutputResumeWrongCount(t *testing.T) {
	out := filepath.Join(t.TempDir(), "pred.jsonl")
	o, _ := CreateOutput(out, 5, false)
	o.Put(0, lineFor(0))
	o.Abort()
	_, err := CreateOutput(out, 6, true)
	mustContain(t, err, out+".partial", "written for 5 datapoints, not 6")
	// Without resume the journal is discarded.
	o, err = CreateOutput(out, 6, false)
	if err != nil {
		t.Fatal(err)
	}
	if o.Done(0) {
		t.Error("without resume, the old journal was used")
	}
	o.Abort()
	o, err = CreateOutput(out, 6, true)
	if err != nil {
		t.Fatal(err)
	}
	if o.Done(0) {
		t.Error("the discarded journal came back")
	}
	o.Abort()
}

func TestOutputConcurrent(t *testing.T) {
	const n = 500
	want := reference(t, n)
	out := filepath.Join(t.TempDir(), "pred.jsonl")
	o, err := CreateOutput(out, n, false)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				if o.Done(i) {
					t.Errorf("Done(%d) before Put", i)
				}
				if err := o.Put(i, lineFor(i)); err != nil {
					t.Error(err)
				}
				if w == 0 && i == 240 {
					o.Missing()
				}
			}
		}()
	}
	wg.Wait()
	if err := o.Finish(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(out); !bytes.Equal(got, want) {
		t.Error("concurrent output differs")
	}
}

func TestOutputConcurrentCrashResume(t *testing.T) {
	const n = 300
	want := reference(t, n)
	out := filepath.Join(t.TempDir(), "pred.jsonl")
	o, _ := CreateOutput(out, n, false)
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n/2; i += 6 {
				o.Put(i, lineFor(i))
			}
		}()
	}
	wg.Wait()
	// Tear the last record as a crash in the middle of a write would.
	o.Abort()
	j, _ := os.ReadFile(out + ".partial")
	os.WriteFile(out+".partial", j[:len(j)-9], 0o644)
	o, err := CreateOutput(out, n, true)
	if err != nil {
		t.Fatal(err)
	}
	if missing := o.Missing(); missing != n-n/2+1 {
		t.Errorf("Missing = %d, want %d", missing, n-n/2+1)
	}
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 6 {
				if !o.Done(i) {
					if err := o.Put(i, lineFor(i)); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	wg.Wait()
	if err := o.Finish(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(out); !bytes.Equal(got, want) {
		t.Error("output differs")
	}
}

func TestOutputStdout(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	var buf bytes.Buffer
	o, err := createOutput("-", 3, true, nil, &buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{1, 2, 0} {
		if o.Done(i) {
			t.Errorf("Done(%d) with no journal", i)
		}
		if err := o.Put(i, lineFor(i)); err != nil {
			t.Fatal(err)
		}
	}
	if buf.Len() != 0 {
		t.Error("lines written before Finish")
	}
	if err := o.Finish(); err != nil {
		t.Fatal(err)
	}
	if want := string(lineFor(0)) + "\n" + string(lineFor(1)) + "\n" + string(lineFor(2)) + "\n"; buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("files written for stdout output: %v", ents)
	}
}

func TestOutputMissingFolder(t *testing.T) {
	out := filepath.Join(t.TempDir(), "no", "such", "pred.jsonl")
	_, err := CreateOutput(out, 1, false)
	mustContain(t, err, out+".partial")
}

// TestOutputMemoryBounded: the lines are not kept in memory until Finish (50 MB of
// lines, a few MB of heap), and Finish streams them back from the journal.
func TestOutputMemoryBounded(t *testing.T) {
	racetest.Skip(t, "encodes 50 MB on one goroutine")
	const n, size = 1000, 50 << 10
	out := filepath.Join(t.TempDir(), "pred.jsonl")
	o, err := CreateOutput(out, n, false)
	if err != nil {
		t.Fatal(err)
	}
	ctx := strings.Repeat("x", size)
	for i := range n {
		if err := o.Put(i, PredictionLine(fmt.Sprint(i, ctx), nil, nil)); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if ms.HeapAlloc > 16<<20 {
		t.Errorf("heap %d MB after putting %d MB of lines: lines are kept in memory", ms.HeapAlloc>>20, n*size>>20)
	}
	if err := o.Finish(); err != nil {
		t.Fatal(err)
	}
	got := readLines(t, out)
	if len(got) != n || !strings.HasPrefix(got[n-1], fmt.Sprintf(`{"context":"%d`, n-1)) {
		t.Errorf("%d lines; last %.20s", len(got), got[len(got)-1])
	}
}

// TestOutputFinishDamagedRecord: a record changed in the journal while the run goes on
// (a byte of its line, or its index) makes Finish fail naming the journal and the line,
// without writing the output; the journal stays for a resume, which redoes a line whose
// checksum no longer holds.
func TestOutputFinishDamagedRecord(t *testing.T) {
	const n = 3
	for _, tc := range []struct{ name, old, new string }{
		{"a byte of the line", "context of 1", "context of 7"},
		{"the index", `{"i":1,`, `{"i":2,`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "pred.jsonl")
			o := filled(t, out, n)
			j, _ := os.ReadFile(out + journalSuffix)
			if !bytes.Contains(j, []byte(tc.old)) {
				t.Fatalf("journal does not hold %q:\n%s", tc.old, j)
			}
			os.WriteFile(out+journalSuffix, bytes.Replace(j, []byte(tc.old), []byte(tc.new), 1), 0o644)
			err := o.Finish()
			if err == nil || !strings.Contains(err.Error(), out+journalSuffix) || !strings.Contains(err.Error(), "line 1") {
				t.Fatalf("Finish over a damaged record: %v", err)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("output written from a damaged journal")
			}
			o.Abort()
			if tc.name == "the index" {
				return // the checksum is of the line: a record moved to another index holds
			}
			o, err = CreateOutput(out, n, true)
			if err != nil {
				t.Fatal(err)
			}
			if o.Done(1) || !o.Done(0) || !o.Done(2) {
				t.Errorf("after resume Done = %v %v %v, want true false true", o.Done(0), o.Done(1), o.Done(2))
			}
			o.Put(1, lineFor(1))
			if err := o.Finish(); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(out); !bytes.Equal(got, reference(t, n)) {
				t.Error("output after the resume differs")
			}
		})
	}
}

// TestOutputResumeKeepsEveryAcceptedLine: every line Put accepts is kept by a resume,
// byte for byte (json.Valid accepts white space around a value, and "null").
func TestOutputResumeKeepsEveryAcceptedLine(t *testing.T) {
	lines := []string{" 1", "1 ", "\t{\"a\":1}", "{\"a\":1}\t", "null", "[ ]", `"}"`, `{"value":1}`, "\"\u2028\xe2\x80\xa9\""}
	out := filepath.Join(t.TempDir(), "pred.jsonl")
	o, err := CreateOutput(out, len(lines), false)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range lines {
		if err := o.Put(i, []byte(l)); err != nil {
			t.Fatal(err)
		}
	}
	if err := o.Abort(); err != nil {
		t.Fatal(err)
	}
	o2, err := CreateOutput(out, len(lines), true)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range lines {
		if !o2.Done(i) {
			t.Errorf("line %d %q was not kept by resume", i, l)
			if err := o2.Put(i, []byte(l)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := o2.Finish(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	if want := strings.Join(lines, "\n") + "\n"; string(got) != want {
		t.Errorf("output %q, want %q", got, want)
	}
}

// TestOutputRecordBufferNotRetained: after a huge line the Output does not keep a
// buffer of its size (its memory is 12 bytes per datapoint, whatever the lines).
func TestOutputRecordBufferNotRetained(t *testing.T) {
	out := filepath.Join(t.TempDir(), "pred.jsonl")
	o, err := CreateOutput(out, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Abort()
	huge := `"` + strings.Repeat("a", 8<<20) + `"`
	if err := o.Put(0, []byte(huge)); err != nil {
		t.Fatal(err)
	}
	if err := o.Put(1, []byte("1")); err != nil {
		t.Fatal(err)
	}
	if c := cap(o.rec); c > 1<<20 {
		t.Errorf("the Output keeps a record buffer of %d bytes after an 8 MiB line", c)
	}
}

// TestOutputResumeTruncatedEverywhere: a journal of old and new records cut at every
// byte resumes to the records whole before the cut, and Finish writes the reference.
func TestOutputResumeTruncatedEverywhere(t *testing.T) {
	const n = 4
	want := reference(t, n)
	summed := func(i int) string {
		line := string(lineFor(i))
		b, _ := json.Marshal(journalRecord{I: &i, Line: &line, Sum: lineSum(line)})
		return string(b) + "\n"
	}
	valued := func(i int) string { return string(lineRecord(nil, i, lineFor(i))) + "\n" }
	recs := []string{`{"n":4}` + "\n", valued(2), summed(0), valued(3), summed(1)}
	full := strings.Join(recs, "")
	dir := t.TempDir()
	for cut := 0; cut <= len(full); cut++ {
		out := filepath.Join(dir, fmt.Sprintf("p%d.jsonl", cut))
		if err := os.WriteFile(out+journalSuffix, []byte(full[:cut]), 0o644); err != nil {
			t.Fatal(err)
		}
		o, err := CreateOutput(out, n, true)
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		whole := map[int]bool{}
		at := 0
		for ri, r := range recs {
			// A record without its "\n" at the very end is whole too.
			if at+len(r)-1 <= cut && ri > 0 {
				whole[[]int{2, 0, 3, 1}[ri-1]] = true
			}
			at += len(r)
		}
		for i := range n {
			if o.Done(i) != whole[i] {
				t.Fatalf("cut %d: Done(%d) = %v, want %v", cut, i, o.Done(i), whole[i])
			}
			if !o.Done(i) {
				if err := o.Put(i, lineFor(i)); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := o.Finish(); err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		if got, _ := os.ReadFile(out); !bytes.Equal(got, want) {
			t.Fatalf("cut %d: output differs", cut)
		}
	}
}

// TestOutputResumeDeepLine: a line nested as deep as encoding/json accepts (10,000
// levels: Put takes it) is kept by a resume, though its record nests one level more.
func TestOutputResumeDeepLine(t *testing.T) {
	deep := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	out := filepath.Join(t.TempDir(), "pred.jsonl")
	o, err := CreateOutput(out, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Put(0, []byte(deep)); err != nil {
		t.Fatal(err)
	}
	if err := o.Abort(); err != nil {
		t.Fatal(err)
	}
	o2, err := CreateOutput(out, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	defer o2.Abort()
	if !o2.Done(0) {
		t.Errorf("a line of depth 10000 that Put accepted was not kept by resume")
	}
}
