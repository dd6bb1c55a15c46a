package chunker

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	sitter "github.com/smacker/go-tree-sitter"

	"github.com/repoctx/repoctx/grammars"
)

// neutralizer removes one Kotlin construct from a file's text, for attributing a
// file's parse errors to constructs (TestKotlinSurvey): a construct caused the errors
// when removing it alone makes the parse clean. These are measurement aids (regular
// expressions, approximate), not the grammar's rewrites.
type neutralizer struct {
	name string
	fix  func(src string) string
}

var (
	nzGuard   = regexp.MustCompile(`(?m)^([ \t]*(?:!?is|!?in)[ \t]+[^\n]*?)[ \t]if([ \t(])`)
	nzElseIf  = regexp.MustCompile(`(?m)^([ \t]*)else[ \t]+if([ \t(][^\n]*->)`)
	nzContext = regexp.MustCompile(`\bcontext\((?:[^()]|\([^()]*\))*\)([ \t]*\n?[ \t]*(?:@|fun\b|val\b|var\b|class\b|interface\b|object\b|private\b|public\b|internal\b|protected\b|override\b|inline\b|suspend\b|operator\b|infix\b|abstract\b|open\b|context\b))`)
	nzDollar  = regexp.MustCompile(`\$\$+("""[\s\S]*?"""|"(?:[^"\\\n]|\\.)*")`)
	softKW    = `suspend|annotation|value|data|inline|open|sealed|inner|enum|companion|override|lateinit|operator|infix|external|tailrec|const|vararg|noinline|crossinline|reified|expect|actual|abstract|final|internal|private|protected|public|out|field|get|set|file|by|where|init|constructor|dynamic|receiver|param|setparam|delegate|property|import`
	nzSoftFun = regexp.MustCompile(`(\bfun[ \t]+(?:<[^>\n]*>[ \t]*)?(?:[\w.<>?, *]+\.)?|\.|::)(` + softKW + `)\b`)
	nzEInfix  = regexp.MustCompile(`([\w)\]}"'` + "`" + `][ \t]+)e(\w*)`)
	nzNNType  = regexp.MustCompile(`&[ \t]*Any\b`)
	nzRangeU  = regexp.MustCompile(`\.\.<`)
	nzUnderOp = regexp.MustCompile(`\b_\b`)
	nzExpAct  = regexp.MustCompile(`\b(expect|actual)\b`)
)

var neutralizers = []neutralizer{
	{"when guard (is X if c ->)", func(s string) string {
		s = nzGuard.ReplaceAllString(s, "$1, $2")
		return nzElseIf.ReplaceAllString(s, "${1}true,$2")
	}},
	{"context(...) receivers/parameters", func(s string) string {
		return nzContext.ReplaceAllStringFunc(s, func(m string) string {
			i := strings.LastIndexByte(m[:strings.Index(m, ")")+1], ')')
			_ = i
			sub := nzContext.FindStringSubmatchIndex(m)
			return strings.Repeat(" ", sub[2]) + m[sub[2]:]
		})
	}},
	{"multi-dollar string ($$\"...\")", func(s string) string {
		return nzDollar.ReplaceAllStringFunc(s, func(m string) string {
			k := strings.IndexByte(m, '"')
			return strings.Repeat(" ", k) + strings.ReplaceAll(m[k:], "$", "_")
		})
	}},
	{"soft keyword as member name (fun suspend, .value(...))", func(s string) string {
		return nzSoftFun.ReplaceAllString(s, "${1}x$2")
	}},
	{"infix name starting with e (x eq y; fwcd scanner)", func(s string) string {
		return nzEInfix.ReplaceAllStringFunc(s, func(m string) string {
			sub := nzEInfix.FindStringSubmatch(m)
			switch "e" + sub[2] {
			case "else", "enum", "expect", "external":
				return m
			}
			return sub[1] + "E" + sub[2]
		})
	}},
	{"definitely non-null type (T & Any)", func(s string) string { return nzNNType.ReplaceAllString(s, "     ") }},
	{"open-ended range (..<)", func(s string) string { return nzRangeU.ReplaceAllString(s, "..") }},
	{"underscore type argument (_)", func(s string) string { return nzUnderOp.ReplaceAllString(s, "X") }},
	{"expect/actual", func(s string) string { return nzExpAct.ReplaceAllString(s, "") }},
}

// fileHasParseError reports what `repoctx chunk` flags: some chunk has ParseError.
func fileHasParseError(s *Structural, path, text string) bool {
	f, err := Decode(path, []byte(text), 0)
	if err != nil {
		return false
	}
	cs, err := s.Chunk(f)
	if err == nil {
		err = Validate(f, cs, s.opts.MaxChars)
	}
	if err != nil {
		panic(fmt.Sprintf("%s: %v", path, err))
	}
	for _, c := range cs {
		if c.ParseError {
			return true
		}
	}
	return false
}

// TestKotlinSurvey measures, for each folder in REPOCTX_KT_SURVEY (a list separated by
// the OS path list separator), how many .kt files have a chunk flagged parse_error,
// and attributes each such file to the constructs whose removal makes it clean
// (neutralizers; a file needing several is counted under their combination, one that
// stays in error with all of them removed under "other"). With REPOCTX_KT_SURVEY_V=1
// it lists the files of each class.
func TestKotlinSurvey(t *testing.T) {
	dirs := os.Getenv("REPOCTX_KT_SURVEY")
	if dirs == "" {
		t.Skip("set REPOCTX_KT_SURVEY=<checkout>[:<checkout>...] to survey Kotlin parse errors")
	}
	verbose := os.Getenv("REPOCTX_KT_SURVEY_V") != ""
	s := NewStructural(Options{})
	defer s.Close()
	fmt.Printf("grammar %s\n", grammars.Kotlin.Version)
	for _, dir := range filepath.SplitList(dirs) {
		files, errFiles := 0, 0
		byClass := map[string][]string{}
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".kt") {
				return nil
			}
			raw, err := os.ReadFile(p)
			if err != nil {
				return nil
			}
			files++
			src := string(raw)
			if !fileHasParseError(s, p, src) {
				return nil
			}
			errFiles++
			rel, _ := filepath.Rel(dir, p)
			class := attribute(s, p, src)
			byClass[class] = append(byClass[class], rel)
			return nil
		})
		fmt.Printf("\n%s: %d .kt files, %d with parse errors (%.1f%%)\n", dir, files, errFiles, 100*float64(errFiles)/float64(max(files, 1)))
		classes := make([]string, 0, len(byClass))
		for c := range byClass {
			classes = append(classes, c)
		}
		sort.Slice(classes, func(i, j int) bool { return len(byClass[classes[i]]) > len(byClass[classes[j]]) })
		for _, c := range classes {
			fmt.Printf("  %4d  %5.1f%%  %s\n", len(byClass[c]), 100*float64(len(byClass[c]))/float64(max(files, 1)), c)
			if verbose {
				for _, p := range byClass[c] {
					fmt.Printf("          %s\n", p)
				}
			}
		}
	}
}

// attribute names the neutralizers that, together and each needed, make src clean.
func attribute(s *Structural, path, src string) string {
	all := src
	for _, n := range neutralizers {
		all = n.fix(all)
	}
	if fileHasParseError(s, path, all) {
		return "other"
	}
	for _, n := range neutralizers {
		if !fileHasParseError(s, path, n.fix(src)) {
			return n.name
		}
	}
	// Greedy: drop neutralizers not needed while the result stays clean.
	need := make([]bool, len(neutralizers))
	for i := range need {
		need[i] = true
	}
	for i := range neutralizers {
		need[i] = false
		t := src
		for j, n := range neutralizers {
			if need[j] {
				t = n.fix(t)
			}
		}
		if fileHasParseError(s, path, t) {
			need[i] = true
		}
	}
	var names []string
	for i, n := range neutralizers {
		if need[i] {
			names = append(names, n.name)
		}
	}
	return strings.Join(names, " + ")
}

// BenchmarkKotlinRepo compares tree-sitter parsing alone (a bare parser, no rewrite)
// with structural chunking (rewrite, parse, chunk, recovery of files with errors)
// over the .kt files of the checkout REPOCTX_BENCH_KT (skipped when unset), with the
// compiled-in grammar. MB/s is of source bytes per second of wall time, cpu-MB/s per
// second of the process's CPU time.
func BenchmarkKotlinRepo(b *testing.B) {
	dir := os.Getenv("REPOCTX_BENCH_KT")
	if dir == "" {
		b.Skip("set REPOCTX_BENCH_KT=<checkout> to benchmark on a Kotlin repository")
	}
	var files []*File
	var size int64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".kt") {
			return nil
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		if f, err := Decode(p, raw, 0); err == nil {
			files = append(files, f)
			size += int64(len(f.Text))
		}
		return nil
	})
	b.Run("parse", func(b *testing.B) {
		p := sitter.NewParser()
		defer p.Close()
		p.SetLanguage(grammars.Kotlin.Language())
		b.SetBytes(size)
		defer reportCPU(b, size)()
		for i := 0; i < b.N; i++ {
			for _, f := range files {
				tree, err := p.ParseCtx(context.Background(), nil, f.Text)
				if err != nil || tree == nil {
					b.Fatal("parse failed", err)
				}
				tree.Close()
			}
		}
	})
	b.Run("structural", func(b *testing.B) {
		s := NewStructural(Options{})
		defer s.Close()
		b.SetBytes(size)
		defer reportCPU(b, size)()
		for i := 0; i < b.N; i++ {
			for _, f := range files {
				if _, err := s.Chunk(f); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
