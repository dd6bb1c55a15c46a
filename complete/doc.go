// Package complete asks a code model for fill-in-the-middle completions over an
// OpenAI-compatible completions endpoint (llama.cpp's server, Ollama, vLLM all
// serve one): the FIM prompt of four model families ([Template]), trimmed to the
// model's window the way the competition's scorer trimmed contexts
// ([TrimToWindow], [Template.Build]), and an HTTP client ([Client]) with a timeout
// per request, bounded retries with jittered exponential backoff and bounded
// concurrency. [Model] ties the three together; it is also a drafter for
// RepoCoder's iterative retrieval (it implements assemble.Drafter).
//
//	c, err := complete.NewClient("http://127.0.0.1:8080/v1", complete.DefaultOptions())
//	t, _ := complete.LookupTemplate("qwen2.5")
//	m := &complete.Model{Client: c, Name: "qwen2.5-coder-7b", Template: t}
//	res, err := m.Complete(ctx, complete.Prompt{Path: "a.py", Context: ctx.Text, Prefix: p, Suffix: s})
//	fmt.Print(res.Text)
//
// # Design note
//
// The package needs only the root package's vocabulary (contexts are
// "<|file_sep|>{path}\n{content}" parts, [repoctx.MaxNewTokens] is the room kept
// for the completion, token counts come from a [repoctx.TokenCounter]: a
// tokens.Tokenizer for exact counts or [repoctx.CharEstimate]), so that eval,
// assemble's iterative retrieval and the command line can all use it. The trimming
// rule lives here, below eval, which uses it for its window settings.
//
// Requests are plain JSON POSTs to {base}/completions with model, prompt,
// max_tokens, temperature 0 (greedy, as the competition decoded) and stop; the
// answer's choices[0].text is the completion. Streaming is not used. A failed
// attempt is retried when another attempt can help (no connection, no answer
// within the timeout, HTTP 408, 429 or 5xx, a body cut short); a 4xx answer or a
// body that is not a completions response is reported at once. Nothing here
// talks to the network in tests: they run a fake endpoint in the test process.
package complete
