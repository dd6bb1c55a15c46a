package chunker

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/repoctx/repoctx/internal/racetest"
)

// kotlinAnnotated is Kotlin whose annotations drive the kotlin2 grammar's external
// scanner through its loops that skip to the next whitespace or newline: use-site
// targets with arguments (@get:JvmName(...)) and an annotated primary constructor.
const kotlinAnnotated = `package a

class Service @Inject constructor(private val repo: Repo) {
    @get:JvmName("isReady")
    val ready: Boolean get() = true

    @set:Deprecated("no")
    var name: String = ""
        @Synchronized set

    @field:Volatile var count = 0
}
`

// TestTruncatedInputs chunks every prefix of each language fixture (cut after every
// byte), as an editor's file is while being typed: each must finish, within a bound
// far above a parse's 5 s limit, and keep the invariants. This is the kind of fault a
// grammar's external scanner has when a loop skips characters without checking for the
// end of the input: tree-sitter's lookahead is then 0 forever and its operation limit,
// checked between tokens, never fires (the kotlin2 scanner did so on a file, or on
// the included ranges of a recovery parse, ending in "@get:Foo(").
func TestTruncatedInputs(t *testing.T) {
	racetest.Skip(t, "chunks every prefix of each file on one goroutine")
	type input struct{ name, text string }
	ins := []input{{"annotated.kt", kotlinAnnotated}}
	ents, err := os.ReadDir(filepath.Join("testdata", "langs"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("testdata", "langs", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		ins = append(ins, input{e.Name(), string(b)})
	}
	py, err := os.ReadFile(filepath.Join("..", "testdata", "sample", "repositories-python-sample",
		"acme__invoicing-9ff1acde1a5ac71c0c750cec351f7b8f2aff43d7", "invoicing", "cli.py"))
	if err != nil {
		t.Fatal(err)
	}
	ins = append(ins, input{"cli.py", string(py)})

	s := NewStructural(Options{})
	stuck := false
	defer func() {
		if !stuck { // a stuck parse still uses the parser: freeing it would crash the exit
			s.Close()
		}
	}()
	const bound = 30 * time.Second
	for _, in := range ins {
		for n := 1; n <= len(in.text); n++ {
			f, err := Decode(in.name, []byte(in.text[:n]), 0)
			if err != nil {
				t.Fatalf("Decode(%s, %d bytes): %v", in.name, n, err)
			}
			done := make(chan error, 1)
			var cs []Chunk
			go func() {
				var err error
				cs, err = s.Chunk(f)
				done <- err
			}()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("%s cut after %d bytes: %v", in.name, n, err)
				}
				if err := Validate(f, cs, s.opts.MaxChars); err != nil {
					t.Fatalf("%s cut after %d bytes: invariants: %v", in.name, n, err)
				}
			case <-time.After(bound):
				// The parse goroutine is stuck in C; the test binary exits with it.
				stuck = true
				t.Fatalf("%s cut after %d bytes (ending %q): no chunks after %v", in.name, n, tail(in.text[:n], 20), bound)
			}
		}
	}
}

// tail returns the last n bytes of s (all of s when shorter).
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// TestParseCPULimitFlagged: a file whose parse runs over its CPU time limit (a
// nanosecond: every parse does) is cut into windows that are flagged ParseError (and
// Fallback) and carry LimitParseCPU, so that chunk --stats counts it among the files
// with parse errors and says why, and caches never keep them.
func TestParseCPULimitFlagged(t *testing.T) {
	var sb strings.Builder
	for i := range 8000 {
		fmt.Fprintf(&sb, "def f%d(a, b):\n    return [a + b for _ in range(%d)]\n", i, i)
	}
	f, err := Decode("big.py", []byte(sb.String()), 0)
	if err != nil {
		t.Fatal(err)
	}
	s := NewStructural(Options{ParseCPULimit: time.Nanosecond})
	defer s.Close()
	cs, err := s.Chunk(f)
	if err != nil || len(cs) == 0 {
		t.Fatalf("Chunk: %d chunks, %v", len(cs), err)
	}
	for _, c := range cs {
		if !c.ParseError || !c.Fallback || c.Limit != LimitParseCPU {
			t.Fatalf("chunk %d: parse error %v, fallback %v, limit %q; want both and %q", c.Ordinal, c.ParseError, c.Fallback, c.Limit, LimitParseCPU)
		}
	}
	if !FileLimit(cs).Transient() {
		t.Errorf("limit %q is not transient", FileLimit(cs))
	}
}
