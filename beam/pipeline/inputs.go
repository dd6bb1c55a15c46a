package pipeline

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
)

// archiveExts are the file name endings of the inputs that are not folders, longest
// first: zip archives, tar archives (plain or gzip-compressed) and git bundles.
var archiveExts = []string{".tar.gz", ".tgz", ".tar", ".zip", ".bundle"}

// ArchiveName returns the repository name of an archive or bundle input p (its file
// name without the extension) and true, or "" and false when p's name has none of
// the endings .zip, .tar, .tar.gz, .tgz, .bundle (case-insensitive).
func ArchiveName(p string) (string, bool) {
	base := filepath.Base(p)
	low := strings.ToLower(base)
	for _, e := range archiveExts {
		if strings.HasSuffix(low, e) && len(base) > len(e) {
			return base[:len(base)-len(e)], true
		}
	}
	return "", false
}

// unpackInput writes the files of the archive or bundle p into the empty folder dir,
// so that the walker sees them as it sees a checked-out folder. p is a local path or
// the URL of a file of a Beam file system (see openInput); the kind of input comes from
// p's name. Zip and tar entries keep their stored paths; a bundle's files are those of
// the tree of its HEAD, or of its single ref. Only regular files are written:
// symbolic links, devices and submodules are left out. An entry whose path leaves
// dir is an error naming it; every error names p.
//
// Tar archives and bundles are read as a stream. A zip archive needs random access:
// a remote one is first copied into a temporary local file, removed on return.
func unpackInput(ctx context.Context, p, dir string) error {
	low := strings.ToLower(p)
	var err error
	switch {
	case strings.HasSuffix(low, ".zip"):
		err = unpackZip(ctx, p, dir)
	case strings.HasSuffix(low, ".tar"), strings.HasSuffix(low, ".tar.gz"), strings.HasSuffix(low, ".tgz"):
		err = withInput(ctx, p, func(r io.Reader) error { return unpackTar(r, dir, !strings.HasSuffix(low, ".tar")) })
	case strings.HasSuffix(low, ".bundle"):
		err = withInput(ctx, p, func(r io.Reader) error { return unpackBundle(r, dir) })
	default:
		return fmt.Errorf("%s: not a folder, zip, tar, tar.gz or git bundle", p)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	return nil
}

// withInput calls read with the contents of the input p (buffered), then closes it.
func withInput(ctx context.Context, p string, read func(io.Reader) error) error {
	rc, err := openInput(ctx, p)
	if err != nil {
		return err
	}
	defer rc.Close()
	return read(bufio.NewReaderSize(rc, 1<<16))
}

// writeEntry writes one file of an archive to dir/name.
func writeEntry(dir, name string, r io.Reader) error {
	if !filepath.IsLocal(filepath.FromSlash(name)) {
		return fmt.Errorf("entry %q: path outside the repository", name)
	}
	name = path.Clean(name)
	dst := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("entry %q: %w", name, err)
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return fmt.Errorf("entry %q: %w", name, err)
	}
	return f.Close()
}

// unpackZip writes the regular files of the zip archive p into dir; a remote p is
// copied to a local temporary file first.
func unpackZip(ctx context.Context, p, dir string) error {
	local := p
	if isURL(p) {
		tmp, err := os.CreateTemp("", "repoctx-beam-*.zip")
		if err != nil {
			return err
		}
		local = tmp.Name()
		defer os.Remove(local)
		err = withInput(ctx, p, func(r io.Reader) error {
			_, err := io.Copy(tmp, r)
			return err
		})
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("copy to %s: %w", local, err)
		}
	}
	zr, err := zip.OpenReader(local)
	if err != nil && err != zip.ErrInsecurePath {
		return err
	}
	defer zr.Close()
	for _, zf := range zr.File {
		if !zf.Mode().IsRegular() {
			continue // folders, symbolic links
		}
		rc, err := zf.Open()
		if err != nil {
			return fmt.Errorf("entry %q: %w", zf.Name, err)
		}
		err = writeEntry(dir, zf.Name, rc)
		rc.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// unpackTar writes the regular files of the tar stream r (gzip-compressed when gz)
// into dir.
func unpackTar(r io.Reader, dir string, gz bool) error {
	if gz {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return err
		}
		defer zr.Close()
		r = zr
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if h.Typeflag != tar.TypeReg {
			continue // folders, links, devices, pax global headers
		}
		if err := writeEntry(dir, h.Name, tr); err != nil {
			return err
		}
	}
}

// unpackBundle reads the git bundle r (format v2 or v3: a header of refs, then a
// packfile) with go-git: the pack is indexed into memory storage and the tree of
// the commit of HEAD, or of the bundle's single ref, is written out. Incremental
// bundles (with prerequisite commits) are refused.
func unpackBundle(r io.Reader, dir string) error {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReader(r)
	}
	sig, err := br.ReadString('\n')
	if err != nil || (sig != "# v2 git bundle\n" && sig != "# v3 git bundle\n") {
		return fmt.Errorf("line 1: not a git bundle (v2 or v3)")
	}
	refs := map[string]plumbing.Hash{}
	var order []string
	for line := 2; ; line++ {
		s, err := br.ReadString('\n')
		if err != nil {
			return fmt.Errorf("line %d: bundle header: %w", line, err)
		}
		s = strings.TrimSuffix(s, "\n")
		switch {
		case s == "":
		case strings.HasPrefix(s, "@"):
			continue // v3 capability
		case strings.HasPrefix(s, "-"):
			return fmt.Errorf("line %d: incremental bundle (prerequisite %s): not supported", line, strings.TrimPrefix(s, "-"))
		default:
			h, ref, ok := strings.Cut(s, " ")
			if !ok || !plumbing.IsHash(h) {
				return fmt.Errorf("line %d: bad ref line %q", line, s)
			}
			refs[ref] = plumbing.NewHash(h)
			order = append(order, ref)
			continue
		}
		break
	}
	var head plumbing.Hash
	switch h, ok := refs["HEAD"]; {
	case ok:
		head = h
	case len(order) == 1:
		head = refs[order[0]]
	default:
		return fmt.Errorf("no HEAD and %d refs: give a bundle with HEAD or one ref", len(order))
	}
	st := memory.NewStorage()
	if err := packfile.UpdateObjectStorage(st, br); err != nil {
		return fmt.Errorf("packfile: %w", err)
	}
	c, err := object.GetCommit(st, head)
	if err != nil {
		return fmt.Errorf("commit %s: %w", head, err)
	}
	tree, err := c.Tree()
	if err != nil {
		return fmt.Errorf("tree of %s: %w", head, err)
	}
	return tree.Files().ForEach(func(tf *object.File) error {
		if tf.Mode != filemode.Regular && tf.Mode != filemode.Executable && tf.Mode != filemode.Deprecated {
			return nil // symbolic links
		}
		r, err := tf.Reader()
		if err != nil {
			return fmt.Errorf("blob %s: %w", tf.Name, err)
		}
		defer r.Close()
		return writeEntry(dir, tf.Name, r)
	})
}

// ErrBadInput marks the errors of ExpandRepos that come from the arguments
// themselves (a glob that matches nothing, a missing file, a scheme with no file
// system, an input of no known kind), as opposed to failures of the file systems:
// errors.Is(err, ErrBadInput) holds for them. Their messages do not repeat it.
var ErrBadInput = errors.New("bad input")

// inputError is an error of ErrBadInput.
type inputError struct{ error }

func (e inputError) Is(target error) bool { return target == ErrBadInput }
func (e inputError) Unwrap() error        { return e.error }

// badInputf formats an error of ErrBadInput.
func badInputf(format string, args ...any) error {
	return inputError{fmt.Errorf(format, args...)}
}

// ExpandRepos turns the arguments into the input repositories, in order, Index
// 0..n-1. An argument is a local path or the URL of a Beam file system
// (scheme://...; the schemes are those the program registered, by blank imports of
// Beam's io/filesystem/gcs, s3, memfs, ...).
//
// A local argument with * ? or [ is a glob (filepath.Glob) standing for its matches
// in sorted order; each path is a folder or an archive (.zip, .tar, .tar.gz, .tgz)
// or git bundle (.bundle). A URL is always expanded by its file system's List (a
// glob, or one file named exactly), its matches sorted; each must be an archive or
// bundle: a folder on an object store is a set of objects under a prefix, which
// Beam's List cannot list recursively on every file system, so remote folders are
// not inputs. Only listing happens here, on the launcher; the workers read the
// files (unpackInput).
//
// The Repository column (RepoSpec.Name) is a folder's argument as given, cleaned,
// as a slash path, and an archive's or bundle's file name without the extension;
// two inputs of one name are an error. Errors name the argument; those caused by
// the arguments match ErrBadInput (errors.Is).
func ExpandRepos(ctx context.Context, args []string) ([]RepoSpec, error) {
	var out []RepoSpec
	seen := map[string]bool{}
	add := func(name, p string) error {
		if seen[name] {
			return badInputf("repository %s is given twice", name)
		}
		seen[name] = true
		out = append(out, RepoSpec{Index: len(out), Name: name, Path: p})
		return nil
	}
	for _, a := range args {
		if isURL(a) {
			paths, err := listURL(ctx, a)
			if err != nil {
				return nil, err
			}
			for _, p := range paths {
				name, ok := ArchiveName(p)
				if !ok {
					return nil, notRemoteInput(p)
				}
				if err := add(name, p); err != nil {
					return nil, err
				}
			}
			continue
		}
		paths := []string{a}
		if strings.ContainsAny(a, "*?[") {
			m, err := filepath.Glob(a)
			if err != nil {
				return nil, badInputf("bad glob %q: %v", a, err)
			}
			if len(m) == 0 {
				return nil, badInputf("%q matches nothing", a)
			}
			paths = m
		}
		for _, p := range paths {
			fi, err := os.Stat(p)
			if errors.Is(err, fs.ErrNotExist) {
				return nil, badInputf("%v", err)
			}
			if err != nil {
				return nil, err
			}
			name := filepath.ToSlash(filepath.Clean(p))
			if !fi.IsDir() {
				an, ok := ArchiveName(p)
				if !ok {
					return nil, badInputf("%s is not a folder, zip, tar, tar.gz, tgz or git bundle", p)
				}
				name = an
			}
			if err := add(name, p); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// notRemoteInput is the error of a URL that is not an archive or bundle.
func notRemoteInput(u string) error {
	return badInputf("%s: a remote input must be a zip, tar, tar.gz or tgz archive or a git bundle (.bundle); folders are read from local paths only", u)
}

// listURL expands the URL u with its file system's List, sorted: the files a glob
// matches, or u itself when it names a file. An empty list is an error.
func listURL(ctx context.Context, u string) ([]string, error) {
	glob := strings.ContainsAny(u, "*?[")
	if _, ok := ArchiveName(u); !ok && !glob {
		return nil, notRemoteInput(u) // before a client of the file system is made
	}
	fsys, err := openFS(ctx, u)
	if err != nil {
		return nil, badInputf("input %s: %v", u, err)
	}
	defer fsys.Close()
	m, err := fsys.List(ctx, u)
	if err != nil {
		return nil, fmt.Errorf("input %s: list: %w", u, err)
	}
	if len(m) == 0 {
		if glob {
			return nil, badInputf("%q matches nothing", u)
		}
		return nil, badInputf("input %s: no such file", u)
	}
	slices.Sort(m)
	return slices.Compact(m), nil
}

// openFS returns the Beam file system of p's scheme. Beam's constructors of the gs
// and s3 file systems panic when they cannot make a client (no AWS configuration,
// say); that panic is returned as an error naming p.
func openFS(ctx context.Context, p string) (fsys filesystem.Interface, err error) {
	defer func() {
		if r := recover(); r != nil {
			fsys, err = nil, fmt.Errorf("%s: opening its file system: %v", p, r)
		}
	}()
	return filesystem.New(ctx, p)
}

// openInput opens the input file p: a local path, or a URL read through the Beam
// file system of its scheme (which is closed with the returned reader).
func openInput(ctx context.Context, p string) (io.ReadCloser, error) {
	if !isURL(p) {
		return os.Open(p)
	}
	fsys, err := openFS(ctx, p)
	if err != nil {
		return nil, err
	}
	rc, err := fsys.OpenRead(ctx, p)
	if err != nil {
		fsys.Close()
		return nil, fmt.Errorf("open %s: %w", p, err)
	}
	return &fsReader{ReadCloser: rc, fsys: fsys}, nil
}

// fsReader closes a file of a Beam file system, then the file system.
type fsReader struct {
	io.ReadCloser
	fsys filesystem.Interface
}

func (r *fsReader) Close() error {
	err := r.ReadCloser.Close()
	if ferr := r.fsys.Close(); err == nil {
		err = ferr
	}
	return err
}

// isArchiveInput reports whether the input p is to be unpacked: a URL (remote
// inputs are archives or bundles), or a local file, not a folder, whose name has an
// archive's or bundle's ending.
func isArchiveInput(p string) bool {
	if isURL(p) {
		return true
	}
	fi, err := os.Stat(p)
	if err != nil || fi.IsDir() {
		return false
	}
	_, ok := ArchiveName(p)
	return ok
}
