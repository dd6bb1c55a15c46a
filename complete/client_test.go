package complete

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/repoctx/repoctx"
)

// fast are options for tests: short timeouts and backoffs.
func fast() Options {
	o := DefaultOptions()
	o.Timeout, o.Backoff, o.MaxBackoff = 300*time.Millisecond, time.Millisecond, 5*time.Millisecond
	return o
}

// answer writes an OpenAI completions answer with text.
func answer(w http.ResponseWriter, text string) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"cmpl-1","object":"text_completion","model":"m","choices":[{"index":0,"text":%q,"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}`, text)
}

// server runs handler behind an httptest server and returns a client for its /v1.
func server(t *testing.T, o Options, handler http.HandlerFunc) *Client {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	c, err := NewClient(srv.URL+"/v1", o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCompleteNormal(t *testing.T) {
	var got map[string]any
	var path, auth string
	o := fast()
	o.APIKey = "k123"
	c := server(t, o, func(w http.ResponseWriter, r *http.Request) {
		path, auth = r.URL.Path, r.Header.Get("Authorization")
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Error(err)
		}
		answer(w, "x + 1")
	})
	resp, err := c.Complete(context.Background(), Request{Model: "qwen", Prompt: "<|fim_prefix|>a<|fim_suffix|>b<|fim_middle|>", Stop: []string{"<|endoftext|>"}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "x + 1" || resp.FinishReason != "stop" || resp.PromptTokens != 12 || resp.CompletionTokens != 3 || resp.Attempts != 1 {
		t.Errorf("response %+v", resp)
	}
	if path != "/v1/completions" || auth != "Bearer k123" {
		t.Errorf("path %q, auth %q", path, auth)
	}
	want := map[string]any{"model": "qwen", "prompt": "<|fim_prefix|>a<|fim_suffix|>b<|fim_middle|>", "max_tokens": float64(repoctx.MaxNewTokens),
		"temperature": float64(0), "stop": []any{"<|endoftext|>"}, "stream": false}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("request %v, want %v", got, want)
	}
	if c.URL() != strings.TrimSuffix(c.URL(), "/v1/completions")+"/v1/completions" {
		t.Errorf("URL %s", c.URL())
	}
}

func TestCompleteRetriesServerErrors(t *testing.T) {
	var calls atomic.Int32
	c := server(t, fast(), func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"error":{"message":"loading model","type":"unavailable_error","code":503}}`)
			return
		}
		answer(w, "ok")
	})
	resp, err := c.Complete(context.Background(), Request{Prompt: "p"})
	if err != nil || resp.Text != "ok" || resp.Attempts != 3 {
		t.Fatalf("after two 503s: %+v, %v", resp, err)
	}
}

// failure runs one request against handler and returns its *Error and the calls made.
func failure(t *testing.T, o Options, handler http.HandlerFunc) (*Error, int) {
	t.Helper()
	var calls atomic.Int32
	c := server(t, o, func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		io.Copy(io.Discard, r.Body) // so that the server notices when the client hangs up
		handler(w, r)
	})
	_, err := c.Complete(context.Background(), Request{Prompt: "p"})
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want *Error", err, err)
	}
	if !strings.HasPrefix(err.Error(), "complete: POST "+c.URL()+": ") {
		t.Errorf("message %q does not name the URL", err)
	}
	return e, int(calls.Load())
}

func TestCompleteFailures(t *testing.T) {
	o := fast() // 2 retries: 3 attempts for what another attempt could fix
	for _, tc := range []struct {
		name      string
		handler   http.HandlerFunc
		attempts  int
		status    int
		msg       string
		malformed bool
	}{
		{"500", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "boom", http.StatusInternalServerError)
		}, 3, 500, "HTTP 500: boom (3 attempts)", false},
		{"ollama error", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusBadGateway)
			io.WriteString(w, `{"error":"model 'x' not found"}`)
		}, 3, 502, "HTTP 502: model 'x' not found", false},
		{"400 is not retried", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":{"message":"This model's maximum context length is 16384 tokens"}}`)
		}, 1, 400, "HTTP 400: This model's maximum context length is 16384 tokens (1 attempt)", false},
		{"429 with Retry-After", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "30") // capped at MaxBackoff
			w.WriteHeader(http.StatusTooManyRequests)
		}, 3, 429, "HTTP 429: empty body", false},
		{"garbage JSON", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "<html><body>llama.cpp web UI</body></html>")
		}, 1, 200, "not an OpenAI completions response: invalid character '<'", true},
		{"no choices", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"object":"list","data":[]}`)
		}, 1, 200, "no choices[0].text", true},
		{"timeout", func(w http.ResponseWriter, r *http.Request) {
			select { // never answers in time
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}, 3, 0, "no complete answer within 300ms (3 attempts)", false},
		{"slow stream", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			for _, b := range []byte(`{"choices":[{"text":"slow"}]}`) {
				if _, err := w.Write([]byte{b}); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(50 * time.Millisecond): // 29 bytes take 1.45 s
				}
			}
		}, 3, 200, "reading the answer: no complete answer within 300ms", false},
		{"body cut short", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "500")
			io.WriteString(w, `{"choices":[{"te`)
		}, 3, 200, "reading the answer: unexpected EOF", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, calls := failure(t, o, tc.handler)
			if e.Attempts != tc.attempts || calls != tc.attempts || e.Status != tc.status {
				t.Errorf("attempts %d, calls %d, status %d; want %d, %d", e.Attempts, calls, e.Status, tc.attempts, tc.status)
			}
			if !strings.Contains(e.Error(), tc.msg) {
				t.Errorf("message %q, want it to contain %q", e.Error(), tc.msg)
			}
			if errors.Is(e, ErrMalformed) != tc.malformed {
				t.Errorf("errors.Is(ErrMalformed) = %v", !tc.malformed)
			}
		})
	}
}

// A slow answer that still comes within the timeout is fine.
func TestCompleteSlowStreamInTime(t *testing.T) {
	c := server(t, fast(), func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		for _, part := range []string{`{"choices":`, `[{"text":"a`, `b"}]}`} {
			io.WriteString(w, part)
			w.(http.Flusher).Flush()
			time.Sleep(20 * time.Millisecond)
		}
	})
	resp, err := c.Complete(context.Background(), Request{Prompt: "p"})
	if err != nil || resp.Text != "ab" {
		t.Fatalf("%+v, %v", resp, err)
	}
}

func TestCompleteRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	c, err := NewClient("http://"+addr+"/v1", fast())
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Complete(context.Background(), Request{Prompt: "p"})
	var e *Error
	if !errors.As(err, &e) || e.Attempts != 3 || e.Status != 0 || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("refused: %v", err)
	}
}

func TestCompleteEmptyIsNotAnError(t *testing.T) {
	c := server(t, fast(), func(w http.ResponseWriter, r *http.Request) { answer(w, "") })
	resp, err := c.Complete(context.Background(), Request{Prompt: "p"})
	if err != nil || resp.Text != "" || resp.Attempts != 1 {
		t.Errorf("%+v, %v", resp, err)
	}
}

// Cancelling the caller's context stops the retries at once.
func TestCompleteCancelled(t *testing.T) {
	o := fast()
	o.Retries, o.Backoff, o.MaxBackoff = 5, 10*time.Second, 10*time.Second
	c := server(t, o, func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", 500) })
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Complete(ctx, Request{Prompt: "p"})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 3*time.Second {
		t.Errorf("after %v: %v", time.Since(start), err)
	}
	if !strings.Contains(err.Error(), "HTTP 500: down") {
		t.Errorf("the last attempt's error is missing: %v", err)
	}
}

func TestCompleteConcurrencyBound(t *testing.T) {
	o := fast()
	o.Concurrency = 2
	var in, peak atomic.Int32
	c := server(t, o, func(w http.ResponseWriter, r *http.Request) {
		n := in.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		time.Sleep(30 * time.Millisecond)
		in.Add(-1)
		answer(w, "x")
	})
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Complete(context.Background(), Request{Prompt: "p"}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if c.Concurrency() != 2 {
		t.Errorf("Concurrency() = %d", c.Concurrency())
	}
	if p := peak.Load(); p < 1 || p > 2 {
		t.Errorf("peak %d requests in flight, want at most 2", p)
	}
}

func TestNewClientRefuses(t *testing.T) {
	for _, base := range []string{"", "localhost:8080", "ftp://host/v1", "http://", "http://h/v1?x=1", "://bad"} {
		_, err := NewClient(base, DefaultOptions())
		var oe *repoctx.OptionError
		if !errors.As(err, &oe) || oe.Option != "endpoint" {
			t.Errorf("NewClient(%q): %v", base, err)
		}
	}
	for name, o := range map[string]Options{
		"timeout":     {Timeout: 0, Concurrency: 1},
		"retries":     {Timeout: time.Second, Retries: -1, Concurrency: 1},
		"backoff":     {Timeout: time.Second, Backoff: -1, Concurrency: 1},
		"concurrency": {Timeout: time.Second},
	} {
		_, err := NewClient("http://127.0.0.1:1/v1", o)
		var oe *repoctx.OptionError
		if !errors.As(err, &oe) || oe.Option != name {
			t.Errorf("%s: %v", name, err)
		}
	}
	c, err := NewClient("https://api.example.com/v1/", DefaultOptions())
	if err != nil || c.URL() != "https://api.example.com/v1/completions" {
		t.Errorf("trailing slash: %v, %v", c, err)
	}
}
