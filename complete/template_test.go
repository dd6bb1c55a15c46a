package complete

import (
	"strings"
	"testing"
)

// A two-part context, the second part's last line without "\n".
const twoParts = "<|file_sep|>lib/util.py\ndef twice(x):\n    return 2 * x\n<|file_sep|>conf.py\nDEBUG = True"

var holePrompt = Prompt{Path: "app/main.py", Context: twoParts, Prefix: "def f(y):\n    return ", Suffix: "\n\nprint(f(1))\n"}

func TestTemplatePrompts(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    Prompt
		want string
	}{
		// Qwen2.5-Coder: repository-level FIM as in QwenLM's Qwen2.5-Coder-repolevel-fim.py.
		{"qwen2.5", holePrompt,
			"<|file_sep|>lib/util.py\ndef twice(x):\n    return 2 * x\n<|file_sep|>conf.py\nDEBUG = True\n" +
				"<|file_sep|>app/main.py\n<|fim_prefix|>def f(y):\n    return <|fim_suffix|>\n\nprint(f(1))\n<|fim_middle|>"},
		{"qwen2.5", withRepo(holePrompt, "acme/tool"),
			"<|repo_name|>acme/tool\n<|file_sep|>lib/util.py\ndef twice(x):\n    return 2 * x\n<|file_sep|>conf.py\nDEBUG = True\n" +
				"<|file_sep|>app/main.py\n<|fim_prefix|>def f(y):\n    return <|fim_suffix|>\n\nprint(f(1))\n<|fim_middle|>"},
		{"qwen2.5", noContext(holePrompt),
			"<|fim_prefix|>def f(y):\n    return <|fim_suffix|>\n\nprint(f(1))\n<|fim_middle|>"},
		// Mellum: <filename> files, then suffix-prefix-middle (Mellum-4b-base's model card).
		{"mellum", holePrompt,
			"<filename>lib/util.py\ndef twice(x):\n    return 2 * x\n<filename>conf.py\nDEBUG = True\n" +
				"<filename>app/main.py\n<fim_suffix>\n\nprint(f(1))\n<fim_prefix>def f(y):\n    return <fim_middle>"},
		{"mellum", withRepo(holePrompt, "acme/tool"), // no repository token: Repo is ignored
			"<filename>lib/util.py\ndef twice(x):\n    return 2 * x\n<filename>conf.py\nDEBUG = True\n" +
				"<filename>app/main.py\n<fim_suffix>\n\nprint(f(1))\n<fim_prefix>def f(y):\n    return <fim_middle>"},
		{"mellum", noContext(holePrompt),
			"<fim_suffix>\n\nprint(f(1))\n<fim_prefix>def f(y):\n    return <fim_middle>"},
		// StarCoder2: <repo_name>, <file_sep> files, the hole's path inside <fim_prefix> (the paper's format).
		{"starcoder2", withRepo(holePrompt, "acme/tool"),
			"<repo_name>acme/tool<file_sep>lib/util.py\ndef twice(x):\n    return 2 * x\n<file_sep>conf.py\nDEBUG = True\n" +
				"<file_sep><fim_prefix>app/main.py\ndef f(y):\n    return <fim_suffix>\n\nprint(f(1))\n<fim_middle>"},
		{"starcoder2", holePrompt,
			"<file_sep>lib/util.py\ndef twice(x):\n    return 2 * x\n<file_sep>conf.py\nDEBUG = True\n" +
				"<file_sep><fim_prefix>app/main.py\ndef f(y):\n    return <fim_suffix>\n\nprint(f(1))\n<fim_middle>"},
		{"starcoder2", noContext(holePrompt),
			"<fim_prefix>def f(y):\n    return <fim_suffix>\n\nprint(f(1))\n<fim_middle>"},
		// Codestral: [SUFFIX] first, then [PREFIX] with "+++++ path" files before the prefix.
		{"codestral", holePrompt,
			"[SUFFIX]\n\nprint(f(1))\n[PREFIX]+++++ lib/util.py\ndef twice(x):\n    return 2 * x\n+++++ conf.py\nDEBUG = True\n" +
				"+++++ app/main.py\ndef f(y):\n    return "},
		{"codestral", noContext(holePrompt),
			"[SUFFIX]\n\nprint(f(1))\n[PREFIX]def f(y):\n    return "},
	} {
		tmpl, err := LookupTemplate(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if got := tmpl.Render(tc.p); got != tc.want {
			t.Errorf("%s, repo %q, context %v:\n got %q\nwant %q", tc.name, tc.p.Repo, tc.p.Context != "", got, tc.want)
		}
		// A generous window keeps everything: Build gives the same prompt.
		if got := tmpl.Build(tc.p, 1<<20, nil); got.Text != tc.want || got.Context != tc.p.Context || got.Tokens.Overflow {
			t.Errorf("%s: Build with a huge window: %q, kept %q, overflow %v", tc.name, got.Text, got.Context, got.Tokens.Overflow)
		}
	}
}

func withRepo(p Prompt, repo string) Prompt { p.Repo = repo; return p }
func noContext(p Prompt) Prompt             { p.Context = ""; return p }

func TestLookupTemplate(t *testing.T) {
	if got := strings.Join(Names(), ","); got != "qwen2.5,mellum,starcoder2,codestral" {
		t.Errorf("Names() = %s", got)
	}
	for _, n := range Names() {
		tmpl, err := LookupTemplate(strings.ToUpper(n))
		if err != nil || tmpl.Name != n {
			t.Errorf("LookupTemplate(%q) = %v, %v", strings.ToUpper(n), tmpl, err)
			continue
		}
		if tmpl.Window <= 0 || len(tmpl.Stop) == 0 || len(tmpl.Sources) == 0 || tmpl.FileSep == "" {
			t.Errorf("%s: incomplete template %+v", n, tmpl)
		}
		for _, s := range tmpl.Sources {
			if !strings.HasPrefix(s, "https://") {
				t.Errorf("%s: source %q is not a URL", n, s)
			}
		}
	}
	_, err := LookupTemplate("gpt")
	if err == nil || !strings.Contains(err.Error(), `"gpt"`) || !strings.Contains(err.Error(), "qwen2.5, mellum, starcoder2, codestral") {
		t.Errorf("unknown template: %v", err)
	}
}

func TestCut(t *testing.T) {
	q, _ := LookupTemplate("qwen2.5")
	for in, want := range map[string]string{
		"x = 1\n":                               "x = 1\n",
		"x = 1<|endoftext|>junk":                "x = 1",
		"x = 1<|file_sep|>b.py\n<|fim_prefix|>": "x = 1",
		"<|im_end|>":                            "",
		"":                                      "",
	} {
		if got := q.Cut(in); got != want {
			t.Errorf("Cut(%q) = %q, want %q", in, got, want)
		}
	}
	c, _ := LookupTemplate("codestral")
	if got := c.Cut("a()\n+++++ other.py\nb"); got != "a()" {
		t.Errorf("codestral Cut = %q", got)
	}
}
