package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/assemble"
	"github.com/repoctx/repoctx/complete"
	"github.com/repoctx/repoctx/tokens"
)

// The model endpoint flags, shared by complete, eval --complete-endpoint and
// --draft-endpoint (predict, eval): defaults from the library.
var (
	defEndpoint = complete.DefaultOptions()

	endpointTimeoutFlag = &cli.DurationFlag{Name: "endpoint-timeout", Value: defEndpoint.Timeout, Usage: "model endpoint: time `limit` of one request (connecting, sending and reading the whole answer)"}
	endpointRetriesFlag = &cli.IntFlag{Name: "endpoint-retries", Value: defEndpoint.Retries, Usage: "model endpoint: retries of a request that got no connection, no answer in time, HTTP 408, 429 or 5xx (with jittered exponential backoff)"}
	endpointConcFlag    = &cli.IntFlag{Name: "endpoint-concurrency", Value: defEndpoint.Concurrency, Usage: "model endpoint: requests in flight at once"}
	maxNewTokensFlag    = &cli.IntFlag{Name: "max-new-tokens", Value: repoctx.MaxNewTokens, Usage: "model endpoint: most tokens of a completion (the window keeps 384 for it whatever this is)"}
)

// endpointFlags are the model endpoint's client flags.
func endpointFlags() []cli.Flag {
	return []cli.Flag{endpointTimeoutFlag, endpointRetriesFlag, endpointConcFlag, maxNewTokensFlag}
}

// draftFlags are predict's (and eval's) flags for a model that drafts the middle in
// iterative retrieval, with the endpoint client's flags and --fim-template.
func draftFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "draft-endpoint", Usage: "iterative retrieval: draft the middle with a code model behind this OpenAI-compatible API's base `URL` (e.g. http://127.0.0.1:8080/v1; prompted with --fim-template, needs --iterations 2 or more); a failed draft falls back on the built-in drafter and is counted"},
		&cli.StringFlag{Name: "draft-model", Usage: "the served model's `name` for --draft-endpoint (llama.cpp ignores it)"},
		fimTemplateFlag(false),
	}, endpointFlags()...)
}

// draftModel sets o.Drafter to --draft-endpoint's model, prompted with the planner's
// token counter when it has one; a usage error when --iterations leaves no round
// to draft for.
func draftModel(c *cli.Context, o *assemble.Options) error {
	m, err := endpointModel(c, "draft-endpoint", "draft-model", o.Plan.Tokens)
	if err != nil || m == nil {
		return err
	}
	if o.Iterations < 2 {
		return usagef("--draft-endpoint needs --iterations 2 or more (the first round drafts nothing)")
	}
	o.Drafter = m
	return nil
}

// fimTemplateFlag is --fim-template, the model's prompt format.
func fimTemplateFlag(required bool) *cli.StringFlag {
	f := &cli.StringFlag{Name: "fim-template", Required: required, Usage: "the model's FIM prompt `format`: " + strings.Join(complete.Names(), ", ")}
	if !required {
		f.Value = complete.Names()[0]
	}
	return f
}

// apiKeyEnv names the environment variable whose value, if set, is sent as the
// endpoint's bearer token.
const apiKeyEnv = "REPOCTX_API_KEY"

// endpointModel returns the model behind the endpoint flag urlFlag (an
// OpenAI-compatible API's base URL) named by the flag nameFlag and prompted with
// --fim-template, with the endpoint flags' client options; nil when urlFlag is
// empty. A bad URL, template or option is a usage error. tc counts tokens for the
// trimming (nil: characters / 4).
func endpointModel(c *cli.Context, urlFlag, nameFlag string, tc repoctx.TokenCounter) (*complete.Model, error) {
	base := c.String(urlFlag)
	if base == "" {
		if c.IsSet(nameFlag) {
			return nil, usagef("--%s needs --%s", nameFlag, urlFlag)
		}
		return nil, nil
	}
	t, err := complete.LookupTemplate(c.String("fim-template"))
	if err != nil {
		return nil, usagef("--fim-template: %s", strings.TrimPrefix(err.Error(), "complete: "))
	}
	o := complete.DefaultOptions()
	o.Timeout, o.Retries, o.Concurrency = c.Duration("endpoint-timeout"), c.Int("endpoint-retries"), c.Int("endpoint-concurrency")
	o.APIKey = os.Getenv(apiKeyEnv)
	cl, err := complete.NewClient(base, o)
	if err != nil {
		var oe *repoctx.OptionError
		if errors.As(err, &oe) {
			oe.Option = map[string]string{"endpoint": urlFlag, "timeout": "endpoint-timeout", "retries": "endpoint-retries",
				"concurrency": "endpoint-concurrency"}[oe.Option]
		}
		return nil, usagef("%v", err)
	}
	if c.Int("max-new-tokens") <= 0 {
		return nil, usagef("--max-new-tokens must be a positive number of tokens, not %d", c.Int("max-new-tokens"))
	}
	return &complete.Model{Client: cl, Name: c.String(nameFlag), Template: t, Tokens: tc, MaxTokens: c.Int("max-new-tokens")}, nil
}

// completeCmd is `repoctx complete`: compose the context of one completion point,
// prompt a model with it and print the completion.
func completeCmd() *cli.Command {
	own := []cli.Flag{
		&cli.StringFlag{Name: "file", Required: true, Usage: "completion file `path`, relative to REPO_DIR"},
		&cli.StringFlag{Name: "prefix-file", Usage: "`file` holding the text before the cursor"},
		&cli.StringFlag{Name: "suffix-file", Usage: "`file` holding the text after the cursor"},
		&cli.IntFlag{Name: "line", Usage: "cursor `line` (1-based) in the file text read from standard input (with --column)"},
		&cli.IntFlag{Name: "column", Usage: "cursor `column` (1-based, in characters) on --line"},
		&cli.StringFlag{Name: "endpoint", Required: true, Usage: "base `URL` of an OpenAI-compatible API, e.g. http://127.0.0.1:8080/v1 (requests go to URL/completions; $" + apiKeyEnv + ", if set, is sent as a bearer token)"},
		&cli.StringFlag{Name: "model", Required: true, Usage: "the served model's `name` (llama.cpp ignores it; Ollama and vLLM need it)"},
		fimTemplateFlag(true),
		&cli.IntFlag{Name: "window", Usage: "model window in `tokens` the prompt is trimmed to (default: the template's: 8000 for mellum, 16000 for the others)"},
		&cli.BoolFlag{Name: "json", Usage: "print the completion with the prompt's token counts and the context parts it kept, as JSON"},
	}
	// The index flags without --model and --model-backend: here --model names the
	// completion model (dense retrieval is LSA or none).
	var index []cli.Flag
	for _, f := range indexFlags() {
		if f != modelFlag && f != backendFlag {
			index = append(index, f)
		}
	}
	flags := append(append(own, endpointFlags()...), index...)
	flags = append(append(flags, composeFlags()...), append([]cli.Flag{verboseFlag, repoFlag, noStoredViewFlag}, walkFlags()...)...)
	return &cli.Command{
		Name:      "complete",
		Usage:     "complete one point of a repository folder with a code model: compose the context, build the FIM prompt trimmed to the window, ask the endpoint",
		ArgsUsage: "REPO_DIR",
		Description: "The cursor is given either by --prefix-file/--suffix-file or by --line and --column with the file's text on standard input.\n" +
			"The prompt is the context (as `repoctx query` composes it) with the prefix and suffix in the model's FIM format (--fim-template),\n" +
			"trimmed as the competition's scorer trimmed contexts: the prefix and suffix (and the template's markers) are counted first,\n" +
			"384 tokens are kept for the completion, and whole lines are dropped from the left of the context. Tokens are counted with\n" +
			"--tokenizer (exact) or as characters / 4. The completion is printed as the model wrote it (cut at the template's stop\n" +
			"strings); with --json, with the prompt's token counts and the parts of the context it kept. When the endpoint still fails\n" +
			"after its retries, complete exits with status 1 and one message.",
		Flags: flags,
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("complete: give one repository folder")
			}
			prefix, suffix, err := cursorText(c)
			if err != nil {
				return err
			}
			copts, err := composeOptions(c, assemble.PresetLive)
			if err != nil {
				return err
			}
			var tc repoctx.TokenCounter
			if p := c.String("tokenizer"); p != "" {
				tk, err := tokens.Load(p)
				if err != nil {
					return usagef("--tokenizer: %v", err)
				}
				tc = tk
				if copts.Plan.On() {
					copts.Plan.Tokens = tk
				}
			}
			m, err := endpointModel(c, "endpoint", "model", tc)
			if err != nil {
				return err
			}
			if w := c.Int("window"); c.IsSet("window") && w <= 0 {
				return usagef("--window must be a positive number of tokens, not %d", w)
			}
			m.Window = c.Int("window")
			repo, _, err := openRepo(c, c.Args().First(), !copts.NoDefinitions, false)
			if err != nil {
				return err
			}
			defer repo.Close()
			hole := repoctx.Hole{Path: filepath.ToSlash(c.String("file")), Prefix: prefix, Suffix: suffix}
			ctx, err := assemble.Compose(c.Context, repo, hole, copts)
			if err != nil {
				return err
			}
			p := complete.Prompt{Path: hole.Path, Context: ctx.Text, Prefix: hole.Prefix, Suffix: hole.Suffix}
			if ctx.Prefix != nil {
				p.Prefix = *ctx.Prefix
			}
			if ctx.Suffix != nil {
				p.Suffix = *ctx.Suffix
			}
			b := m.Build(p)
			if b.Tokens.Overflow {
				fmt.Fprintf(c.App.ErrWriter, "complete: warning: the prefix and suffix alone take more than the %d-token window less %d for the completion: no context fits and the server may refuse the prompt (try --plan-window %d)\n",
					b.Tokens.Window, repoctx.MaxNewTokens, b.Tokens.Window)
			}
			res, err := m.Ask(c.Context, b)
			if err != nil {
				return err
			}
			if strings.TrimSpace(res.Text) == "" {
				fmt.Fprintln(c.App.ErrWriter, "complete: the model returned an empty completion")
			}
			if !c.Bool("json") {
				_, err = io.WriteString(c.App.Writer, res.Text)
				return err
			}
			parts, _ := complete.KeptParts(ctx, b.Context)
			if parts == nil {
				parts = []repoctx.Part{}
			}
			enc := json.NewEncoder(c.App.Writer)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			out := completeJSON{Completion: res.Text, FinishReason: res.Response.FinishReason, Model: m.Name, Endpoint: m.Client.URL(),
				Template: m.Template.Name, Attempts: res.Response.Attempts, Tokens: b.Tokens, Parts: parts, Prompt: b.Text}
			out.ServerUsage.PromptTokens, out.ServerUsage.CompletionTokens = res.Response.PromptTokens, res.Response.CompletionTokens
			return enc.Encode(out)
		},
	}
}

// completeJSON is what complete --json prints.
type completeJSON struct {
	Completion   string          `json:"completion"`    // as printed without --json
	FinishReason string          `json:"finish_reason"` // the server's ("stop", "length")
	Model        string          `json:"model"`
	Endpoint     string          `json:"endpoint"` // the completions URL
	Template     string          `json:"template"`
	Attempts     int             `json:"attempts"`
	Tokens       complete.Tokens `json:"tokens"` // the prompt's counts, by --tokenizer or the estimate
	ServerUsage  struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"server_usage"` // as the server counted (0 when it does not say)
	Parts  []repoctx.Part `json:"parts"`  // the context's parts the prompt kept, least relevant first
	Prompt string         `json:"prompt"` // the prompt sent
}

// cursorText returns the prefix and suffix of the completion point: from
// --prefix-file/--suffix-file, or from the text on standard input cut at --line
// and --column.
func cursorText(c *cli.Context) (prefix, suffix string, err error) {
	byPos := c.IsSet("line") || c.IsSet("column")
	byFiles := c.IsSet("prefix-file") || c.IsSet("suffix-file")
	switch {
	case byPos && byFiles:
		return "", "", usagef("complete: give either --prefix-file/--suffix-file or --line and --column (with the file on standard input), not both")
	case byPos:
		if !c.IsSet("line") || !c.IsSet("column") {
			return "", "", usagef("complete: --line and --column go together")
		}
		raw, err := readInput(c, "-")
		if err != nil {
			return "", "", fmt.Errorf("complete: %w", err)
		}
		at, err := cursorOffset(string(raw), c.Int("line"), c.Int("column"))
		if err != nil {
			return "", "", usagef("complete: %v", err)
		}
		return string(raw[:at]), string(raw[at:]), nil
	case byFiles:
		var parts [2][]byte
		for i, name := range []string{"prefix-file", "suffix-file"} {
			if p := c.String(name); p != "" {
				if parts[i], err = readInput(c, p); err != nil {
					return "", "", fmt.Errorf("--%s: %w", name, err)
				}
			}
		}
		if len(parts[0]) == 0 && len(parts[1]) == 0 {
			return "", "", usagef("complete: --prefix-file and --suffix-file are both empty")
		}
		return string(parts[0]), string(parts[1]), nil
	}
	return "", "", usagef("complete: give --prefix-file/--suffix-file, or --line and --column with the file on standard input")
}

// cursorOffset returns the byte offset in text of line (1-based) and column
// (1-based, in Unicode code points; one past the line's last character is its end).
// A text ending in "\n" has one more, empty line after it.
func cursorOffset(text string, line, column int) (int, error) {
	lines := strings.SplitAfter(text, "\n")
	if line < 1 || line > len(lines) {
		return 0, fmt.Errorf("--line %d is outside the text's lines 1..%d", line, len(lines))
	}
	at := 0
	for _, l := range lines[:line-1] {
		at += len(l)
	}
	l := strings.TrimSuffix(strings.TrimSuffix(lines[line-1], "\n"), "\r")
	n := utf8.RuneCountInString(l)
	if column < 1 || column > n+1 {
		return 0, fmt.Errorf("--column %d is outside line %d's columns 1..%d", column, line, n+1)
	}
	for i := range l {
		if column == 1 {
			return at + i, nil
		}
		column--
	}
	return at + len(l), nil
}
