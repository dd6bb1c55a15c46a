package pipeline

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

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
// so that the walker sees them as it sees a checked-out folder. Zip and tar entries
// keep their stored paths; a bundle's files are those of the tree of its HEAD, or of
// its single ref. Only regular files are written: symbolic links, devices and
// submodules are left out. An entry whose path leaves dir is an error naming it.
func unpackInput(p, dir string) error {
	low := strings.ToLower(p)
	var err error
	switch {
	case strings.HasSuffix(low, ".zip"):
		err = unpackZip(p, dir)
	case strings.HasSuffix(low, ".tar"), strings.HasSuffix(low, ".tar.gz"), strings.HasSuffix(low, ".tgz"):
		err = unpackTar(p, dir, !strings.HasSuffix(low, ".tar"))
	case strings.HasSuffix(low, ".bundle"):
		err = unpackBundle(p, dir)
	default:
		return fmt.Errorf("%s: not a folder, zip, tar, tar.gz or git bundle", p)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	return nil
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

func unpackZip(p, dir string) error {
	zr, err := zip.OpenReader(p)
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

func unpackTar(p, dir string, gz bool) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	var r io.Reader = bufio.NewReader(f)
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

// unpackBundle reads a git bundle (format v2 or v3: a header of refs, then a
// packfile) with go-git: the pack is indexed into memory storage and the tree of
// the commit of HEAD, or of the bundle's single ref, is written out. Incremental
// bundles (with prerequisite commits) are refused.
func unpackBundle(p, dir string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReader(f)
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
