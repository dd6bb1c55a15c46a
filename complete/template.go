package complete

import (
	"fmt"
	"strings"

	"github.com/repoctx/repoctx"
)

// Prompt is what a fill-in-the-middle prompt is made of. All text is UTF-8 and is
// passed to the model verbatim (a prefix that itself contains a model's control
// tokens is not escaped).
type Prompt struct {
	// Repo names the repository, e.g. "owner/name"; optional. Qwen2.5-Coder's and
	// StarCoder2's repository-level formats start with it when it is set; the
	// other templates ignore it.
	Repo string
	// Path is the completion file, slash-separated, relative to the repository
	// root; the repository-level formats name it before the prefix.
	Path string
	// Context is repository context as repoctx composes it: parts
	// "<|file_sep|>{path}\n{content}" ([repoctx.FileSep]); "" for none. A template
	// replaces every repoctx.FileSep with its model's file separator, as the
	// competition's scorer did.
	Context string
	// Prefix and Suffix are the text before and after the cursor that the model is
	// given (a context's overrides, when it has them).
	Prefix, Suffix string
}

// Template is the fill-in-the-middle prompt format of one model family. A prompt
// with context (or a Repo) uses the family's repository-level format; one without
// uses its file-level format, which names no file. Templates are read-only:
// [LookupTemplate] returns shared values.
type Template struct {
	// Name is what --fim-template takes: "qwen2.5", "mellum", "starcoder2" or
	// "codestral".
	Name string
	// Model says which models use the format.
	Model string
	// Window is the model window in tokens used when a caller gives none: the
	// competition's (8000 for Mellum-4B, 16000 for Qwen2.5-Coder-7B and
	// Codestral-2501; 16000 for StarCoder2, whose context is 16,384).
	Window int
	// FileSep is what stands for [repoctx.FileSep] in the model's prompt: it
	// starts every context part, followed by the part's path and "\n".
	FileSep string
	// Stop lists the strings that end a completion: the model's end-of-text and
	// control tokens. They are sent as the request's stop sequences and cut again
	// from the answer ([Template.Cut]) in case a server ignores them.
	Stop []string
	// Sources are where the format's tokens and layout come from (model cards,
	// example code, tokenizer files, papers), as URLs.
	Sources []string

	render func(p Prompt, ctx string, repoLevel bool) string
}

// The templates, in the order [Names] lists them.
var templates = []*Template{
	{
		Name:   "qwen2.5",
		Model:  "Qwen2.5-Coder (base models)",
		Window: 16000,
		// <|fim_prefix|> <|fim_suffix|> <|fim_middle|> <|fim_pad|> <|repo_name|>
		// <|file_sep|> are added tokens 151659-151664 of the Qwen2.5 tokenizer;
		// the repository-level example ends generation at all of them and at
		// <|endoftext|> and <|im_end|>.
		FileSep: repoctx.FileSep,
		Stop:    []string{"<|endoftext|>", "<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>", "<|im_end|>"},
		Sources: []string{
			"https://github.com/QwenLM/Qwen2.5-Coder/blob/main/examples/Qwen2.5-Coder-repolevel-fim.py",
			"https://github.com/QwenLM/Qwen2.5-Coder/blob/main/examples/Qwen2.5-Coder-fim.py",
			"https://huggingface.co/Qwen/Qwen2.5-Coder-7B/blob/main/tokenizer_config.json",
		},
		// <|repo_name|>{repo}\n<|file_sep|>{path}\n{content}...<|file_sep|>{path}\n
		// <|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>
		render: func(p Prompt, ctx string, repoLevel bool) string {
			fim := "<|fim_prefix|>" + p.Prefix + "<|fim_suffix|>" + p.Suffix + "<|fim_middle|>"
			if !repoLevel {
				return fim
			}
			var sb strings.Builder
			if p.Repo != "" {
				sb.WriteString("<|repo_name|>" + p.Repo + "\n")
			}
			sb.WriteString(ctx)
			sb.WriteString("<|file_sep|>" + p.Path + "\n")
			sb.WriteString(fim)
			return sb.String()
		},
	},
	{
		Name:   "mellum",
		Model:  "JetBrains Mellum-4B (base and SFT models)",
		Window: 8000,
		// Files are "<filename>{path}\n{content}"; the hole is in
		// suffix-prefix-middle order (SPM, as Mellum was trained).
		FileSep: "<filename>",
		Stop:    []string{"<|endoftext|>", "<filename>", "<fim_prefix>", "<fim_suffix>", "<fim_middle>"},
		Sources: []string{
			"https://huggingface.co/JetBrains/Mellum-4b-base (Fill in the middle with additional files as context generation)",
			"https://huggingface.co/JetBrains/Mellum-4b-base/commit/ddf77ce4289722d1bfd59a34b8899500c2ce87c8",
		},
		// <filename>{path}\n{content}...<filename>{path}\n
		// <fim_suffix>{suffix}<fim_prefix>{prefix}<fim_middle>
		render: func(p Prompt, ctx string, repoLevel bool) string {
			fim := "<fim_suffix>" + p.Suffix + "<fim_prefix>" + p.Prefix + "<fim_middle>"
			if !repoLevel {
				return fim
			}
			return ctx + "<filename>" + p.Path + "\n" + fim
		},
	},
	{
		Name:   "starcoder2",
		Model:  "BigCode StarCoder2 (3B, 7B, 15B)",
		Window: 16000,
		// Repository context is "<repo_name>{repo}<file_sep>{path}\n{code}..."; the
		// file with the hole is "<file_sep><fim_prefix>{path}\n{prefix}<fim_suffix>
		// {suffix}<fim_middle>" (the StarCoder2 paper's repository-context FIM
		// format, the path inside the prefix part).
		FileSep: "<file_sep>",
		Stop:    []string{"<|endoftext|>", "<file_sep>", "<repo_name>", "<fim_prefix>", "<fim_suffix>", "<fim_middle>"},
		Sources: []string{
			"https://arxiv.org/abs/2402.19173 (StarCoder 2 and The Stack v2, section 5: repository-context formatting and FIM)",
			"https://huggingface.co/bigcode/starcoder2-15b/blob/main/tokenizer_config.json",
		},
		render: func(p Prompt, ctx string, repoLevel bool) string {
			if !repoLevel {
				return "<fim_prefix>" + p.Prefix + "<fim_suffix>" + p.Suffix + "<fim_middle>"
			}
			var sb strings.Builder
			if p.Repo != "" {
				sb.WriteString("<repo_name>" + p.Repo)
			}
			sb.WriteString(ctx)
			sb.WriteString("<file_sep><fim_prefix>" + p.Path + "\n" + p.Prefix)
			sb.WriteString("<fim_suffix>" + p.Suffix + "<fim_middle>")
			return sb.String()
		},
	},
	{
		Name:   "codestral",
		Model:  "Mistral Codestral (22B v0.1, 2501)",
		Window: 16000,
		// mistral-common encodes a FIM request as <s>[SUFFIX]{suffix}[PREFIX]{prefix}
		// and the model writes the middle next; the server's tokenizer adds <s>.
		// Codestral has no file separator token: other files go before the prefix,
		// each headed "+++++ {path}" as Continue's Codestral multi-file template
		// does.
		FileSep: "+++++ ",
		Stop:    []string{"</s>", "[PREFIX]", "[SUFFIX]", "[MIDDLE]", "\n+++++ "},
		Sources: []string{
			"https://github.com/mistralai/mistral-common/blob/main/src/mistral_common/tokens/tokenizers/instruct.py (InstructTokenizerV2.encode_fim)",
			"https://huggingface.co/mistralai/Codestral-22B-v0.1",
			"https://github.com/continuedev/continue/blob/main/core/autocomplete/templating/AutocompleteTemplate.ts (codestralMultifileFimTemplate)",
		},
		// [SUFFIX]{suffix}[PREFIX]+++++ {path}\n{content}...+++++ {path}\n{prefix}
		render: func(p Prompt, ctx string, repoLevel bool) string {
			if !repoLevel {
				return "[SUFFIX]" + p.Suffix + "[PREFIX]" + p.Prefix
			}
			return "[SUFFIX]" + p.Suffix + "[PREFIX]" + ctx + "+++++ " + p.Path + "\n" + p.Prefix
		},
	},
}

// Names returns the templates' names: "qwen2.5", "mellum", "starcoder2", "codestral".
func Names() []string {
	out := make([]string, len(templates))
	for i, t := range templates {
		out[i] = t.Name
	}
	return out
}

// LookupTemplate returns the template called name (case-insensitive), or an error
// listing the known names.
func LookupTemplate(name string) (*Template, error) {
	for _, t := range templates {
		if strings.EqualFold(t.Name, name) {
			return t, nil
		}
	}
	return nil, fmt.Errorf("complete: unknown FIM template %q (known: %s)", name, strings.Join(Names(), ", "))
}

// Render returns the prompt of p in the template's format, with p.Context whole:
// its repoctx.FileSep separators replaced by t.FileSep and a "\n" added when it
// does not end in one. See [Template.Build] for a prompt trimmed to a window.
func (t *Template) Render(p Prompt) string {
	return t.render(p, t.context(p.Context), p.Context != "" || p.Repo != "")
}

// context returns ctx as the model sees it: separators replaced, ending in "\n".
func (t *Template) context(ctx string) string {
	if ctx == "" {
		return ""
	}
	if t.FileSep != repoctx.FileSep {
		ctx = strings.ReplaceAll(ctx, repoctx.FileSep, t.FileSep)
	}
	if !strings.HasSuffix(ctx, "\n") {
		ctx += "\n"
	}
	return ctx
}

// Cut returns text up to the first of the template's stop strings, or text
// whole when it holds none.
func (t *Template) Cut(text string) string {
	end := len(text)
	for _, s := range t.Stop {
		if i := strings.Index(text[:end], s); i >= 0 {
			end = i
		}
	}
	return text[:end]
}
