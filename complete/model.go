package complete

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/repoctx/repoctx"
)

// Model is one code model behind an endpoint, prompted with one template. Its
// methods are safe for concurrent use (the Client bounds the requests in flight);
// its fields must not change while they run.
type Model struct {
	// Client sends the requests. Required.
	Client *Client
	// Name is the model as the server names it (the request's "model"). llama.cpp's
	// server ignores it; Ollama and vLLM need it.
	Name string
	// Template is the model's FIM format. Required.
	Template *Template
	// Window is the model window in tokens prompts are trimmed to; 0 means
	// Template.Window.
	Window int
	// Tokens counts tokens for the trimming; nil means repoctx.CharEstimate. Give
	// the model's own tokenizer (tokens.Load) for exact counts.
	Tokens repoctx.TokenCounter
	// MaxTokens is the most tokens a completion may have; 0 means
	// repoctx.MaxNewTokens (what the competition generated).
	MaxTokens int
}

// Completion is a model's answer to one prompt.
type Completion struct {
	// Text is the completion, cut at the template's first stop string.
	Text string
	// Prompt is the prompt that was sent, with its token counts.
	Prompt Built
	// Response is the server's answer (Response.Text uncut).
	Response Response
}

// ErrEmpty is wrapped by [Model.Draft]'s error when the model's completion is
// blank: there is nothing to retrieve with.
var ErrEmpty = errors.New("complete: the model returned an empty completion")

// Build returns p's prompt for the model's window and counter (see
// [Template.Build]).
func (m *Model) Build(p Prompt) Built {
	return m.Template.Build(p, m.Window, m.Tokens)
}

// Ask sends a built prompt. It returns the Client's error (an *Error, or one
// wrapping ctx.Err()) when the request fails.
func (m *Model) Ask(ctx context.Context, b Built) (Completion, error) {
	r, err := m.Client.Complete(ctx, Request{Model: m.Name, Prompt: b.Text, MaxTokens: m.MaxTokens, Stop: m.Template.Stop})
	if err != nil {
		return Completion{Prompt: b}, err
	}
	return Completion{Text: m.Template.Cut(r.Text), Prompt: b, Response: r}, nil
}

// Complete builds p's prompt and sends it: Ask(ctx, Build(p)).
func (m *Model) Complete(ctx context.Context, p Prompt) (Completion, error) {
	return m.Ask(ctx, m.Build(p))
}

// Draft guesses the middle of hole h from its first composed context c, asking
// the model: it implements assemble.Drafter for RepoCoder's iterative retrieval
// (Zhang et al. 2023, §3: the draft of the completion, not the unfinished code,
// is the next query). The prompt is c's text with c's prefix and suffix overrides
// when it has them (else h's), trimmed to the window. Any failure returns an
// error naming h.Path that the caller counts and falls back on: the Client's
// error after its retries (refused connection, timeout, HTTP 5xx, an answer that
// is not a completions response) or [ErrEmpty] for a blank completion.
func (m *Model) Draft(ctx context.Context, h repoctx.Hole, c repoctx.Context) (string, error) {
	p := Prompt{Path: h.Path, Context: c.Text, Prefix: h.Prefix, Suffix: h.Suffix}
	if c.Prefix != nil {
		p.Prefix = *c.Prefix
	}
	if c.Suffix != nil {
		p.Suffix = *c.Suffix
	}
	res, err := m.Complete(ctx, p)
	if err != nil {
		return "", fmt.Errorf("draft for %s: %w", h.Path, err)
	}
	if strings.TrimSpace(res.Text) == "" {
		return "", fmt.Errorf("draft for %s: %w", h.Path, ErrEmpty)
	}
	return res.Text, nil
}
