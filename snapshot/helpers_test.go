package snapshot

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/repoctx/repoctx/internal/pathsafe"
)

// zent is one entry of a zip built by buildZip.
type zent struct {
	name   string
	body   []byte
	store  bool        // write uncompressed (zip.Store) instead of deflated
	method uint16      // compression method of a raw entry
	mode   fs.FileMode // 0: regular 0644
	// raw entries are written as given: body is the compressed data and
	// declared the uncompressed size written in the headers.
	raw      bool
	declared uint64
	flags    uint16
}

// buildZip returns the bytes of a zip holding ents in order.
func buildZip(t testing.TB, ents ...zent) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, e := range ents {
		method := zip.Deflate
		if e.store {
			method = zip.Store
		}
		if e.raw {
			method = e.method
		}
		h := &zip.FileHeader{Name: e.name, Method: method, Flags: e.flags}
		if e.mode != 0 {
			h.SetMode(e.mode)
		}
		if e.raw {
			h.CompressedSize64 = uint64(len(e.body))
			h.UncompressedSize64 = e.declared
			h.CRC32 = crc32.ChecksumIEEE(e.body)
			fw, err := w.CreateRaw(h)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := fw.Write(e.body); err != nil {
				t.Fatal(err)
			}
			continue
		}
		fw, err := w.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fw.Write(e.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// inner is one snapshot of an outer zip.
type inner struct {
	name string // snapshot name, without ".zip"
	data []byte // inner zip bytes
}

// buildOuter returns an outer zip holding each snapshot as {name}.zip,
// stored (not compressed), as in the real data.
func buildOuter(t testing.TB, snaps ...inner) []byte {
	t.Helper()
	ents := make([]zent, len(snaps))
	for i, s := range snaps {
		ents[i] = zent{name: s.name + ".zip", body: s.data, store: true}
	}
	return buildZip(t, ents...)
}

// writeDataZip writes data as dir/{lang}-{stage}.zip and returns its path.
func writeDataZip(t testing.TB, dir, set string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, set+".zip")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// deflate returns the raw deflate stream of b.
func deflate(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	fw, err := flate.NewWriter(&buf, flate.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(b)
	fw.Close()
	return buf.Bytes()
}

// skipReasons maps each skipped path to its reason.
func skipReasons(s Snapshot) map[string]string {
	m := map[string]string{}
	for _, sk := range s.Skipped() {
		m[sk.Path] = sk.Reason
	}
	return m
}

// mustContain fails unless err is non-nil and its message holds every part.
func mustContain(t testing.TB, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want an error containing %q, got nil", parts)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "snapshot: ") {
		t.Errorf("error %q does not start with \"snapshot: \"", msg)
	}
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Errorf("error %q does not contain %q", msg, p)
		}
	}
}

func writeFiles(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// OpenSource opens the snapshots of a {lang}-{stage} set in the competition layout, as
// dataset.OpenSource does (the folder repositories-{set} first, else {set}.zip), for
// the tests of both kinds of source.
func OpenSource(dataDir, lang, stage string, lim Limits) (Source, error) {
	if !pathsafe.SafeComponent(lang) || !pathsafe.SafeComponent(stage) {
		return nil, fmt.Errorf("snapshot: language %q and stage %q must be plain names", lang, stage)
	}
	set := lang + "-" + stage
	dir := filepath.Join(dataDir, "repositories-"+set)
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		return OpenDirSource(dir, lim)
	}
	zipPath := filepath.Join(dataDir, set+".zip")
	if _, err := os.Lstat(zipPath); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("snapshot: no snapshots for %s: neither %s nor %s exists: %w", set, dir, zipPath, fs.ErrNotExist)
	}
	return OpenZipSource(zipPath, lim)
}
