package tokens

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/repoctx/repoctx"
)

const devDir = "../../shared/data/dev"

// devSources returns the source files (.kt or .py, by ext) of the first snapshots
// of ../shared/data/dev/{lang}-dev.zip (a zip of snapshot zips), up to limit
// bytes; it skips the test when the data is absent.
func devSources(tb testing.TB, lang, ext string, limit int) []string {
	tb.Helper()
	zr, err := zip.OpenReader(filepath.Join(devDir, lang+"-dev.zip"))
	if err != nil {
		tb.Skipf("no dev data: %v", err)
	}
	defer zr.Close()
	var files []string
	total := 0
	for _, snap := range zr.File {
		if !strings.HasSuffix(snap.Name, ".zip") {
			continue
		}
		rc, err := snap.Open()
		if err != nil {
			tb.Fatal(err)
		}
		raw, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			tb.Fatal(err)
		}
		inner, err := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
		if err != nil {
			tb.Fatalf("%s: %v", snap.Name, err)
		}
		for _, f := range inner.File {
			if !strings.HasSuffix(f.Name, ext) {
				continue
			}
			rc, err := f.Open()
			if err != nil {
				tb.Fatal(err)
			}
			b, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				tb.Fatal(err)
			}
			files = append(files, string(b))
			total += len(b)
			if total >= limit {
				return files
			}
		}
	}
	return files
}

// BenchmarkCount reports counting throughput with Qwen2.5's tokenizer on the dev
// snapshots' source files (4 MB per language): "warm" keeps the word cache
// between iterations, "cold" empties it before each pass.
//
//	go test -run XXX -bench Count -count 5 ./tokens/
func BenchmarkCount(b *testing.B) {
	tk := qwen(b)
	for _, lang := range []struct{ name, ext string }{{"kotlin", ".kt"}, {"python", ".py"}} {
		files := devSources(b, lang.name, lang.ext, 4<<20)
		size := 0
		for _, f := range files {
			size += len(f)
		}
		for _, mode := range []string{"warm", "cold"} {
			b.Run(lang.name+"/"+mode, func(b *testing.B) {
				b.SetBytes(int64(size))
				for b.Loop() {
					if mode == "cold" {
						for i := range tk.cache.slots {
							tk.cache.slots[i].Store(nil)
						}
					}
					for _, f := range files {
						tk.Count(f)
					}
				}
			})
		}
	}
}

// BenchmarkCharsPerToken measures the characters (code points) per Qwen token of
// the dev and devb datapoints' prefixes and of the dev snapshots' source files, per
// language, and what repoctx.CharEstimate makes of them: a measurement, not a check,
// so it is a benchmark (it logs its figures once; the loop recounts the Kotlin dev
// sources so that ns/op is the cost of counting them). Run it with
// go test -run '^$' -bench CharsPerToken -benchtime 1x -v ./tokens
func BenchmarkCharsPerToken(b *testing.B) {
	tk := qwen(b)
	report := func(what string, texts []string) {
		chars, toks := 0, 0
		for _, s := range texts {
			chars += utf8.RuneCountInString(s)
			toks += tk.CountInt(s)
		}
		if toks == 0 {
			return
		}
		est := repoctx.CharEstimate{}.Count(strings.Join(texts, ""))
		b.Logf("%s: %d texts, %d characters, %d Qwen tokens: %.2f characters/token; %s = %.0f tokens (%+.0f%%)",
			what, len(texts), chars, toks, float64(chars)/float64(toks), repoctx.CharEstimate{}.Name(), est, 100*(est/float64(toks)-1))
	}
	for _, lang := range []struct{ name, ext string }{{"kotlin", ".kt"}, {"python", ".py"}} {
		if b.N > 1 {
			break // the figures are logged on the first call (b.N == 1) only
		}
		for _, stage := range []string{"dev", "devb"} {
			f, err := os.Open(filepath.Join(devDir, "..", stage, lang.name+"-"+stage+".jsonl"))
			if err != nil {
				b.Log(err)
				continue
			}
			sc := bufio.NewScanner(f)
			sc.Buffer(nil, 1<<26)
			var prefixes []string
			for sc.Scan() {
				var dp struct {
					Prefix string `json:"prefix"`
				}
				if err := json.Unmarshal(sc.Bytes(), &dp); err != nil {
					b.Fatal(err)
				}
				prefixes = append(prefixes, dp.Prefix)
			}
			f.Close()
			report(lang.name+" "+stage+" prefixes", prefixes)
		}
		report(lang.name+" dev source files (4 MB)", devSources(b, lang.name, lang.ext, 4<<20))
	}
	texts := devSources(b, "kotlin", ".kt", 1<<20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, s := range texts {
			tk.CountInt(s)
		}
	}
}
