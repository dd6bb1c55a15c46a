// Package benchrepo gives benchmarks a real repository checkout named by
// $REPOCTX_BENCH_REPO (fetched code is never committed: see the Makefile's bench
// target), and the process measurements they report.
package benchrepo

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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
