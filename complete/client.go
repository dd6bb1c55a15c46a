package complete

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/repoctx/repoctx"
)

// Options configures a [Client]. Start from [DefaultOptions]; [NewClient]
// refuses values that make no sense.
type Options struct {
	// Timeout bounds one attempt: connecting, sending and reading the whole
	// answer. Positive.
	Timeout time.Duration
	// Retries is how many more attempts a request gets after a failed one that
	// another attempt could fix (no connection, no answer within Timeout, HTTP 408,
	// 429 or 5xx, an answer cut short). >= 0.
	Retries int
	// Backoff is the wait before the first retry; it doubles for each further
	// retry up to MaxBackoff, and each wait is drawn uniformly from [d/2, d]
	// ("equal jitter", Brooker, "Exponential Backoff And Jitter", AWS Architecture
	// Blog, 2015) so that workers that failed together do not retry together. A
	// Retry-After header in seconds lengthens the wait, up to MaxBackoff. >= 0.
	Backoff, MaxBackoff time.Duration
	// Concurrency bounds the attempts in flight at once through one Client
	// (requests beyond it wait their turn, or for their context). Positive.
	Concurrency int
	// APIKey, if not empty, is sent as "Authorization: Bearer {APIKey}" (vLLM's
	// --api-key, hosted APIs). Local servers need none.
	APIKey string
	// HTTP is the client requests go through; nil means a new http.Client
	// without an overall timeout (Timeout bounds each attempt).
	HTTP *http.Client
}

// DefaultOptions returns a timeout of 60 s per attempt, 2 retries, backoff from
// 500 ms up to 8 s and 4 requests in flight.
func DefaultOptions() Options {
	return Options{Timeout: 60 * time.Second, Retries: 2, Backoff: 500 * time.Millisecond, MaxBackoff: 8 * time.Second, Concurrency: 4}
}

// Client sends completion requests to one OpenAI-compatible endpoint. It is safe
// for concurrent use.
type Client struct {
	url  string // {base}/completions
	opts Options
	sem  chan struct{}
}

// NewClient returns a client for the OpenAI-compatible API at base, its base URL
// (e.g. "http://127.0.0.1:8080/v1": requests go to base + "/completions"). It
// returns a *repoctx.OptionError for a base that is not an http(s) URL with a
// host (option "endpoint") and for option values out of range.
func NewClient(base string, opts Options) (*Client, error) {
	u, err := url.Parse(strings.TrimSpace(base))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, &repoctx.OptionError{Option: "endpoint", Value: fmt.Sprintf("%q", base), Want: "the base URL of an OpenAI-compatible API, e.g. http://127.0.0.1:8080/v1"}
	}
	switch {
	case opts.Timeout <= 0:
		return nil, &repoctx.OptionError{Option: "timeout", Value: opts.Timeout.String(), Want: "a positive duration"}
	case opts.Retries < 0:
		return nil, &repoctx.OptionError{Option: "retries", Value: strconv.Itoa(opts.Retries), Want: "a number of retries >= 0"}
	case opts.Backoff < 0 || opts.MaxBackoff < 0:
		return nil, &repoctx.OptionError{Option: "backoff", Value: opts.Backoff.String(), Want: "a duration >= 0"}
	case opts.Concurrency <= 0:
		return nil, &repoctx.OptionError{Option: "concurrency", Value: strconv.Itoa(opts.Concurrency), Want: "a positive number of requests"}
	}
	if opts.HTTP == nil {
		opts.HTTP = &http.Client{}
	}
	return &Client{url: strings.TrimRight(u.String(), "/") + "/completions", opts: opts, sem: make(chan struct{}, opts.Concurrency)}, nil
}

// URL returns the completions URL requests go to.
func (c *Client) URL() string { return c.url }

// Concurrency returns the most attempts the client has in flight at once
// (Options.Concurrency): how many callers it is worth feeding it from.
func (c *Client) Concurrency() int { return cap(c.sem) }

// Request is one completion request. Temperature is always 0 (greedy decoding).
type Request struct {
	Model     string   // the served model's name, as the server knows it
	Prompt    string   // the whole prompt text
	MaxTokens int      // the most tokens to generate; <= 0 means repoctx.MaxNewTokens
	Stop      []string // stop sequences (not part of the answer); may be nil
}

// Response is a completion.
type Response struct {
	// Text is choices[0].text of the answer: the completion, "" when the model
	// stopped at once.
	Text string
	// FinishReason is choices[0].finish_reason as the server gave it ("stop",
	// "length"), or "".
	FinishReason string
	// PromptTokens and CompletionTokens are the server's usage counts (0 when it
	// sends none).
	PromptTokens, CompletionTokens int
	// Attempts is how many attempts the request took (1 without retries).
	Attempts int
}

// Error is a request that failed, after Attempts attempts. Its message names the
// URL, what went wrong last and the number of attempts, e.g. "complete: POST
// http://127.0.0.1:8080/v1/completions: HTTP 503: loading model (3 attempts)".
type Error struct {
	URL      string // the completions URL
	Attempts int    // attempts made
	Status   int    // the last answer's HTTP status; 0 when there was none
	Err      error  // what went wrong in the last attempt
}

func (e *Error) Error() string {
	n := "1 attempt"
	if e.Attempts != 1 {
		n = fmt.Sprintf("%d attempts", e.Attempts)
	}
	return fmt.Sprintf("complete: POST %s: %v (%s)", e.URL, e.Err, n)
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// ErrMalformed is wrapped by the error of an answer that is not a completions
// response (not JSON, no choices): typically a base URL that is not the API's.
var ErrMalformed = errors.New("not an OpenAI completions response")

// attemptError is one failed attempt: whether another attempt may help, and the
// server's Retry-After in seconds (0 if none).
type attemptError struct {
	err        error
	status     int
	retry      bool
	retryAfter time.Duration
}

// Complete sends r and returns the completion. It makes up to 1 + Retries
// attempts (see [Options]) and returns an *[Error] when they all fail; when ctx
// ends first, the error wraps ctx.Err(). An empty completion is not an error here
// (callers decide what an empty middle means).
func (c *Client) Complete(ctx context.Context, r Request) (Response, error) {
	if r.MaxTokens <= 0 {
		r.MaxTokens = repoctx.MaxNewTokens
	}
	stop := r.Stop
	if stop == nil {
		stop = []string{}
	}
	body, err := json.Marshal(struct {
		Model       string   `json:"model"`
		Prompt      string   `json:"prompt"`
		MaxTokens   int      `json:"max_tokens"`
		Temperature float64  `json:"temperature"`
		Stop        []string `json:"stop"`
		Stream      bool     `json:"stream"`
	}{r.Model, r.Prompt, r.MaxTokens, 0, stop, false})
	if err != nil {
		return Response{}, &Error{URL: c.url, Err: err}
	}
	wait := c.opts.Backoff
	for attempt := 1; ; attempt++ {
		resp, ae := c.attempt(ctx, body)
		if ae == nil {
			resp.Attempts = attempt
			return resp, nil
		}
		fail := &Error{URL: c.url, Attempts: attempt, Status: ae.status, Err: ae.err}
		if ctx.Err() != nil {
			if !errors.Is(ae.err, ctx.Err()) {
				fail.Err = fmt.Errorf("%w (last attempt: %v)", ctx.Err(), ae.err)
			}
			return Response{}, fail
		}
		if !ae.retry || attempt > c.opts.Retries {
			return Response{}, fail
		}
		d := wait/2 + rand.N(wait/2+1)
		if ae.retryAfter > d {
			d = ae.retryAfter
		}
		d = min(d, max(c.opts.MaxBackoff, wait))
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			fail.Err = fmt.Errorf("%w (last attempt: %v)", ctx.Err(), ae.err)
			return Response{}, fail
		case <-t.C:
		}
		wait = min(2*wait, c.opts.MaxBackoff)
	}
}

// attempt makes one request within Timeout, holding one of the Concurrency slots.
func (c *Client) attempt(ctx context.Context, body []byte) (Response, *attemptError) {
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return Response{}, &attemptError{err: ctx.Err()}
	}
	defer func() { <-c.sem }()
	actx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return Response{}, &attemptError{err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.opts.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.opts.APIKey)
	}
	timedOut := func(err error) error {
		if actx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
			return fmt.Errorf("no complete answer within %v", c.opts.Timeout)
		}
		return err
	}
	hr, err := c.opts.HTTP.Do(req)
	if err != nil {
		return Response{}, &attemptError{err: timedOut(unwrapURLError(err)), retry: true}
	}
	defer hr.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(hr.Body, 64<<20))
	if err != nil {
		return Response{}, &attemptError{err: fmt.Errorf("reading the answer: %w", timedOut(err)), status: hr.StatusCode, retry: true}
	}
	if hr.StatusCode/100 != 2 {
		ae := &attemptError{err: fmt.Errorf("HTTP %d: %s", hr.StatusCode, serverMessage(raw)), status: hr.StatusCode}
		ae.retry = hr.StatusCode == http.StatusRequestTimeout || hr.StatusCode == http.StatusTooManyRequests || hr.StatusCode >= 500
		if s, err := strconv.Atoi(strings.TrimSpace(hr.Header.Get("Retry-After"))); err == nil && s > 0 {
			ae.retryAfter = time.Duration(s) * time.Second
		}
		return Response{}, ae
	}
	var ans struct {
		Choices []struct {
			Text         *string `json:"text"`
			FinishReason *string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(raw, &ans); err != nil {
		return Response{}, &attemptError{err: fmt.Errorf("%w: %v; the answer starts %q", ErrMalformed, err, snippet(raw)), status: hr.StatusCode}
	}
	if len(ans.Choices) == 0 || ans.Choices[0].Text == nil {
		return Response{}, &attemptError{err: fmt.Errorf("%w: no choices[0].text; the answer starts %q", ErrMalformed, snippet(raw)), status: hr.StatusCode}
	}
	out := Response{Text: *ans.Choices[0].Text, PromptTokens: ans.Usage.PromptTokens, CompletionTokens: ans.Usage.CompletionTokens}
	if f := ans.Choices[0].FinishReason; f != nil {
		out.FinishReason = *f
	}
	return out, nil
}

// unwrapURLError drops *url.Error's "Post URL:" (Error names the URL once).
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// serverMessage returns error.message of an OpenAI-style error body, or the body's
// start.
func serverMessage(raw []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &e) == nil && len(e.Error) > 0 {
		var m struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(e.Error, &m) == nil && m.Message != "" {
			return m.Message
		}
		var s string
		if json.Unmarshal(e.Error, &s) == nil && s != "" { // Ollama: {"error": "..."}
			return s
		}
	}
	if s := strings.TrimSpace(snippet(raw)); s != "" {
		return s
	}
	return "empty body"
}

// snippet returns the first 120 bytes of raw, cut at a rune boundary.
func snippet(raw []byte) string {
	s := string(raw)
	if len(s) > 120 {
		s = strings.ToValidUTF8(s[:120], "") + "..."
	}
	return s
}
