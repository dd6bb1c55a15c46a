package main

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/complete"
	"github.com/repoctx/repoctx/serve"
	"github.com/repoctx/repoctx/tokens"
)

// proxyFlags are serve's flags of the fill-in-the-middle proxy (see docs/editors.md).
func proxyFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "upstream", Usage: "proxy: forward editors' completion requests to the model server at this root `URL` (e.g. http://127.0.0.1:8012), adding the repository context to POST /infill (llama.cpp) and POST /v1/completions with a suffix (OpenAI-compatible FIM); every other path passes through"},
		&cli.IntFlag{Name: "window", Value: serve.DefaultProxyWindow, Usage: "proxy: the model window in `tokens`: /v1/completions prompts are trimmed to it, and --extra-tokens defaults to half of it"},
		&cli.IntFlag{Name: "extra-tokens", DefaultText: "--window / 2", Usage: "proxy: most `tokens` of repository parts added to an /infill request's input_extra (counted with --tokenizer, else characters / 4)"},
		&cli.DurationFlag{Name: "context-deadline", Value: serve.DefaultContextDeadline, Usage: "proxy: longest `time` spent finding the file and composing the context of one request; past it the request is forwarded without context (logged and counted in /v1/status)"},
		fimTemplateFlag(false),
	}
}

// proxyConfig reads the proxy flags; tc is the planner's token counter (nil when it
// has none), used unless --tokenizer is to be loaded here.
func proxyConfig(c *cli.Context, tc repoctx.TokenCounter) (serve.ProxyConfig, error) {
	var pc serve.ProxyConfig
	pc.Upstream = c.String("upstream")
	if pc.Upstream == "" {
		for _, f := range []string{"window", "extra-tokens", "context-deadline", "fim-template"} {
			if c.IsSet(f) {
				return pc, usagef("--%s needs --upstream (the proxy is off)", f)
			}
		}
		return pc, nil
	}
	pc.Window, pc.ExtraTokens, pc.ContextDeadline = c.Int("window"), c.Int("extra-tokens"), c.Duration("context-deadline")
	if pc.Window <= 0 || c.IsSet("extra-tokens") && pc.ExtraTokens <= 0 || pc.ContextDeadline <= 0 {
		return pc, usagef("--window and --extra-tokens must be positive numbers of tokens, --context-deadline a positive duration")
	}
	t, err := complete.LookupTemplate(c.String("fim-template"))
	if err != nil {
		return pc, usagef("--fim-template: %s", strings.TrimPrefix(err.Error(), "complete: "))
	}
	pc.Template = t
	pc.Tokens = tc
	if p := c.String("tokenizer"); p != "" && tc == nil {
		tk, err := tokens.Load(p)
		if err != nil {
			return pc, usagef("--tokenizer: %v", err)
		}
		pc.Tokens = tk
	}
	return pc, nil
}
