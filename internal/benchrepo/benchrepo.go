// Package benchrepo gives benchmarks a real repository checkout named by
// $REPOCTX_BENCH_REPO (fetched code is never committed: see the Makefile's bench
// target), and the process measurements they report.
package benchrepo

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/repoctx/repoctx/grammars"
)

// Paths returns the checkout's root and its source files (slash paths relative to
// it, sorted, those of a registered language), skipping the benchmark when
// $REPOCTX_BENCH_REPO is not set or holds no source file.
func Paths(b *testing.B) (string, []string) {
	root := os.Getenv("REPOCTX_BENCH_REPO")
	if root == "" {
		b.Skip("set REPOCTX_BENCH_REPO to a repository checkout (e.g. ktorio/ktor)")
	}
	var paths []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && grammars.ForPath(p) != nil {
			rel, _ := filepath.Rel(root, p)
			paths = append(paths, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(paths)
	if len(paths) == 0 {
		b.Skipf("no source files under %s", root)
	}
	return root, paths
}

// Subset copies the first n of paths (a prefix in path order, so whole modules) from
// root into a new temporary folder and returns it.
func Subset(b *testing.B, root string, paths []string, n int) string {
	dir := filepath.Join(b.TempDir(), "repo")
	for _, p := range paths[:n] {
		raw, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			b.Fatal(err)
		}
		dst := filepath.Join(dir, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(dst), 0o755)
		if err := os.WriteFile(dst, raw, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// PeakRSSMB returns the process's peak resident set size in MiB (Linux ru_maxrss is
// in KiB).
func PeakRSSMB() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Maxrss / 1024
}

// Synthetic writes a generated Python repository into a new temporary folder and
// returns it: files modules of funcs top-level functions each (one structural chunk
// per function: funcs × files chunks), 4-6 lines of code built from a Zipf-distributed
// vocabulary of about 20,000 made-up words, so that the LSA vocabulary reaches its cap
// as on a large real repository. The output depends only on files and funcs.
func Synthetic(b testing.TB, files, funcs int) string {
	rng := rand.New(rand.NewPCG(uint64(files), uint64(funcs)))
	const cons, vows = "bcdfghklmnprstvwz", "aeiou"
	words := make([]string, 20000)
	for i := range words {
		var w []byte
		for range 2 + i%3 {
			w = append(w, cons[rng.IntN(len(cons))], vows[rng.IntN(len(vows))])
		}
		words[i] = string(w)
	}
	zipf := rand.NewZipf(rng, 1.1, 2, uint64(len(words)-1))
	word := func() string { return words[zipf.Uint64()] }
	dir := filepath.Join(b.TempDir(), "synthetic")
	var sb strings.Builder
	for f := range files {
		sb.Reset()
		fmt.Fprintf(&sb, "import %s\n\n", word())
		for g := range funcs {
			a, c, v := word(), word(), word()
			fmt.Fprintf(&sb, "\ndef %s_%s_%d(%s, %s):\n", word(), word(), g, a, c)
			fmt.Fprintf(&sb, "    %s = %s.%s(%s, %q)\n", v, a, word(), c, word())
			if g%2 == 0 {
				fmt.Fprintf(&sb, "    if %s is None:\n        return %s.%s()\n", v, c, word())
			}
			fmt.Fprintf(&sb, "    return %s_%s(%s) + %d\n\n", word(), word(), v, rng.IntN(1000))
		}
		p := filepath.Join(dir, fmt.Sprintf("pkg%02d", f%40), fmt.Sprintf("mod_%04d.py", f))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}
