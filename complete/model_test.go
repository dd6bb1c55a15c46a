package complete

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/repoctx/repoctx"
)

func TestDraft(t *testing.T) {
	var prompt string
	var stop []string
	c := server(t, fast(), func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Prompt string   `json:"prompt"`
			Stop   []string `json:"stop"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		prompt, stop = req.Prompt, req.Stop
		answer(w, "    return twice(y)\n<|file_sep|>junk") // a server that ignores stop
	})
	q, _ := LookupTemplate("qwen2.5")
	m := &Model{Client: c, Name: "qwen2.5-coder-7b", Template: q}
	h := repoctx.Hole{Path: "app/main.py", Prefix: "HOLE PREFIX", Suffix: "HOLE SUFFIX"}
	pre, suf := "def f(y):\n", "\nprint(f(1))\n"
	ctx := repoctx.Context{Text: twoParts, Prefix: &pre, Suffix: &suf} // the planner's overrides win
	draft, err := m.Draft(context.Background(), h, ctx)
	if err != nil {
		t.Fatal(err)
	}
	if draft != "    return twice(y)\n" {
		t.Errorf("draft %q", draft)
	}
	want := q.Render(Prompt{Path: "app/main.py", Context: twoParts, Prefix: pre, Suffix: suf})
	if prompt != want {
		t.Errorf("prompt %q, want %q", prompt, want)
	}
	if strings.Join(stop, " ") != strings.Join(q.Stop, " ") {
		t.Errorf("stop %q", stop)
	}
	// Without overrides the hole's prefix and suffix are used.
	if _, err := m.Draft(context.Background(), h, repoctx.Context{Text: twoParts}); err != nil || !strings.Contains(prompt, "<|fim_prefix|>HOLE PREFIX<|fim_suffix|>HOLE SUFFIX") {
		t.Errorf("no overrides: %v, prompt %q", err, prompt)
	}
}

// Every failure is an error naming the file, which the caller counts and falls back on.
func TestDraftFailures(t *testing.T) {
	q, _ := LookupTemplate("mellum")
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		isEmpty bool
	}{
		{"500", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", 500) }, false},
		{"garbage JSON", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "{not json") }, false},
		{"timeout", func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}, false},
		{"empty completion", func(w http.ResponseWriter, r *http.Request) { answer(w, "") }, true},
		{"blank completion", func(w http.ResponseWriter, r *http.Request) { answer(w, " \n\t") }, true},
		{"only a stop string", func(w http.ResponseWriter, r *http.Request) { answer(w, "<filename>other.kt") }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := fast()
			o.Retries = 1
			m := &Model{Client: server(t, o, tc.handler), Template: q}
			d, err := m.Draft(context.Background(), repoctx.Hole{Path: "src/A.kt", Prefix: "val x = "}, repoctx.Context{})
			if err == nil || d != "" {
				t.Fatalf("draft %q, error %v; want an error", d, err)
			}
			if !strings.HasPrefix(err.Error(), "draft for src/A.kt: ") {
				t.Errorf("error %q does not name the file", err)
			}
			if errors.Is(err, ErrEmpty) != tc.isEmpty {
				t.Errorf("errors.Is(err, ErrEmpty) = %v: %v", !tc.isEmpty, err)
			}
			var e *Error
			if !tc.isEmpty && !errors.As(err, &e) {
				t.Errorf("%v is not an *Error", err)
			}
		})
	}
}

func TestModelComplete(t *testing.T) {
	c := server(t, fast(), func(w http.ResponseWriter, r *http.Request) { answer(w, "b()[SUFFIX]") })
	cs, _ := LookupTemplate("codestral")
	m := &Model{Client: c, Name: "codestral", Template: cs, Window: 400, Tokens: byteCounter{}}
	res, err := m.Complete(context.Background(), Prompt{Path: "x.py", Context: "<|file_sep|>y.py\nyy\n", Prefix: "a = ", Suffix: "\n"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "b()" || res.Response.Text != "b()[SUFFIX]" || res.Prompt.Tokens.Window != 400 || res.Prompt.Tokens.Counter != "bytes" {
		t.Errorf("%+v", res)
	}
	// 400 - 384 - 5 bytes of prefix and suffix leave 11 bytes: less than the markup, so no context.
	if res.Prompt.Context != "" || res.Prompt.Text != "[SUFFIX]\n[PREFIX]a = " || !res.Prompt.Tokens.Overflow {
		t.Errorf("prompt %q, tokens %+v", res.Prompt.Text, res.Prompt.Tokens)
	}
}
