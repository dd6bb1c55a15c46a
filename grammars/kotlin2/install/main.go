// Command install puts the generated C source of the Kotlin grammar of package kotlin2
// (the npm package @tree-sitter-grammars/tree-sitter-kotlin at kotlin2.Version) into
// grammars/kotlin2/src, the gitignored folder the build tag kotlin2 compiles. `make
// grammar` runs it from the repository root:
//
//	go run ./grammars/kotlin2/install [-dir grammars/kotlin2]
//
// It downloads the package tarball from the npm registry (the environment's
// npm_config_registry, else https://registry.npmjs.org; HTTPS proxies from the
// environment apply) and checks its SHA-256 before extracting parser.c, scanner.c,
// tree_sitter/*.h and the licence, then applies [scannerPatches] to scanner.c. Only Go
// is needed: no npm, curl or tar. When dir/src already holds this version with these
// patches (its VERSION file reads [stamp]) it does nothing, so later builds work offline. The folder
// is replaced atomically (built beside it, then renamed), so an interrupted run leaves
// the old source or none, never a mix.
//
// Exit status 1, with a message naming the URL or file, when the download, the checksum
// or the extraction fails.
package main

import (
	"archive/tar"
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/repoctx/repoctx/grammars/kotlin2"
)

// tarballSHA256 is the SHA-256 of the registry's tarball of kotlin2.Version.
const tarballSHA256 = "28916be3fdb0487dbd4fd0ea62281f969f15cab2bf13132ceb18d2fb167aa697"

// scannerPatches are the edits made to the package's src/scanner.c after extraction,
// each an exact text that must occur once. They add end-of-input checks to two loops of
// the external scanner that skip characters until whitespace (or, after a '(', until a
// newline): at the end of the input tree-sitter's lookahead is 0, which is neither, so
// the loop never ends and tree-sitter's operation limit, which is checked only between
// tokens, never fires. A file (or the included ranges of a recovery parse) ending in
// an annotation such as "@get:Foo(" hung the parse forever (seen on a file of
// Kotlin/kotlinx.serialization).
var scannerPatches = []struct{ old, new string }{
	{
		"while (!iswspace(lexer->lookahead)) {",
		"while (!lexer->eof(lexer) && !iswspace(lexer->lookahead)) { /* repoctx: end-of-input check */",
	},
	{
		"while ((saw_paren ? lexer->lookahead != '\\n' : !iswspace(lexer->lookahead))) {",
		"while (!lexer->eof(lexer) && (saw_paren ? lexer->lookahead != '\\n' : !iswspace(lexer->lookahead))) { /* repoctx: end-of-input check */",
	},
}

// stamp is what src/VERSION holds: the package version and the patch level of
// [scannerPatches] (a source installed before a patch was added is installed again).
const stamp = kotlin2.Version + " repoctx-patches-1"

// maxTarball bounds the download (the 1.1.0 tarball is 3.5 MB).
const maxTarball = 64 << 20

func main() {
	dir := flag.String("dir", filepath.Join("grammars", "kotlin2"), "the kotlin2 package folder; the source goes into its src/")
	flag.Parse()
	if err := install(*dir); err != nil {
		fmt.Fprintf(os.Stderr, "kotlin2 install: %v\n", err)
		os.Exit(1)
	}
}

func install(dir string) error {
	src := filepath.Join(dir, "src")
	if v, err := os.ReadFile(filepath.Join(src, "VERSION")); err == nil && strings.TrimSpace(string(v)) == stamp {
		if _, err := os.Stat(filepath.Join(src, "parser.c")); err == nil {
			return writeStamp(dir)
		}
	}
	registry := strings.TrimRight(cmp.Or(os.Getenv("npm_config_registry"), os.Getenv("NPM_CONFIG_REGISTRY"), "https://registry.npmjs.org"), "/")
	url := fmt.Sprintf("%s/@tree-sitter-grammars/tree-sitter-kotlin/-/tree-sitter-kotlin-%s.tgz", registry, kotlin2.Version)
	tgz, err := download(url)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(tgz)
	if got := hex.EncodeToString(sum[:]); got != tarballSHA256 {
		return fmt.Errorf("%s: SHA-256 %s, want %s", url, got, tarballSHA256)
	}
	tmp, err := os.MkdirTemp(dir, "src.new-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := extract(tgz, tmp); err != nil {
		return fmt.Errorf("%s: %w", url, err)
	}
	for _, need := range []string{"parser.c", "scanner.c", filepath.Join("tree_sitter", "parser.h")} {
		if _, err := os.Stat(filepath.Join(tmp, need)); err != nil {
			return fmt.Errorf("%s: the tarball has no src/%s", url, filepath.ToSlash(need))
		}
	}
	if err := patchScanner(filepath.Join(tmp, "scanner.c")); err != nil {
		return fmt.Errorf("%s: %w", url, err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "VERSION"), []byte(stamp+"\n"), 0o644); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	old := src + ".old"
	os.RemoveAll(old)
	if err := os.Rename(src, old); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.Rename(tmp, src); err != nil {
		return err
	}
	os.RemoveAll(old)
	if err := writeStamp(dir); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "kotlin2 install: @tree-sitter-grammars/tree-sitter-kotlin@%s into %s\n", kotlin2.Version, src)
	return nil
}

// writeStamp writes dir/src_stamp.h (gitignored), a C comment naming [stamp] and the
// SHA-256 of src/parser.c and src/scanner.c, when it does not already say so. The
// package's parser.c and scanner.c include it: the Go build cache keys a cgo package by
// its own folder's files only, not by what they #include from src/, so this file is
// what makes a new or patched src/ recompile.
func writeStamp(dir string) error {
	var sb strings.Builder
	sb.WriteString("// Generated by go run ./grammars/kotlin2/install (not committed): it changes\n")
	sb.WriteString("// whenever src/ does, so that the Go build cache recompiles the grammar.\n")
	fmt.Fprintf(&sb, "// %s\n", stamp)
	for _, name := range []string{"parser.c", "scanner.c"} {
		b, err := os.ReadFile(filepath.Join(dir, "src", name))
		if err != nil {
			return err
		}
		fmt.Fprintf(&sb, "// src/%s sha256 %x\n", name, sha256.Sum256(b))
	}
	path := filepath.Join(dir, "src_stamp.h")
	if old, err := os.ReadFile(path); err == nil && string(old) == sb.String() {
		return nil
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(sb.String()), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// patchScanner applies [scannerPatches] to the file at path; it fails, naming the
// patch, when one's text does not occur exactly once.
func patchScanner(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(b)
	for i, p := range scannerPatches {
		if n := strings.Count(s, p.old); n != 1 {
			return fmt.Errorf("src/scanner.c: patch %d: its text occurs %d times, want 1: %q", i+1, n, p.old)
		}
		s = strings.Replace(s, p.old, p.new, 1)
	}
	return os.WriteFile(path, []byte(s), 0o644)
}

func download(url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("download: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("download %s: %s", url, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxTarball+1))
	if err != nil {
		return nil, fmt.Errorf("download %s: %w", url, err)
	}
	if len(b) > maxTarball {
		return nil, fmt.Errorf("download %s: more than %d bytes", url, maxTarball)
	}
	return b, nil
}

// extract writes the tarball's package/src/{parser.c,scanner.c,tree_sitter/*.h} and
// package/LICENSE into dst.
func extract(tgz []byte, dst string) error {
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		var rel string
		switch name := h.Name; {
		case name == "package/LICENSE":
			rel = "LICENSE"
		case name == "package/src/parser.c", name == "package/src/scanner.c":
			rel = strings.TrimPrefix(name, "package/src/")
		case strings.HasPrefix(name, "package/src/tree_sitter/") && strings.HasSuffix(name, ".h") && !strings.Contains(name[len("package/src/tree_sitter/"):], "/"):
			rel = strings.TrimPrefix(name, "package/src/")
		default:
			continue
		}
		p := filepath.Join(dst, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, tr)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("%s: %w", h.Name, err)
		}
	}
}
