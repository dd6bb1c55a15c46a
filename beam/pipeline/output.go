package pipeline

import (
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/repoctx/repoctx/internal/atomicfile"
)

// writeParquet writes rows as the Parquet file name in dir.
func writeParquet(ctx context.Context, dir, name string, rows []Row) error {
	return writeFile(ctx, joinOut(dir, name), func(w io.Writer) error {
		pw := NewShardWriter(w)
		if _, err := pw.Write(rows); err != nil {
			return err
		}
		return pw.Close()
	})
}

// writeFile writes the file p with fill: a local path atomically (a temporary file
// renamed into place once fill and the flush succeeded; the folder is created), a
// URL through the Beam file system of its scheme (whose writes are committed on
// Close). Errors name p.
func writeFile(ctx context.Context, p string, fill func(io.Writer) error) error {
	if !isURL(p) {
		af, err := atomicfile.Create(p, atomicfile.Options{Sync: true, MkdirAll: true})
		if err != nil {
			return fmt.Errorf("create %s: %w", p, err)
		}
		defer af.Abort() // a no-op after Commit
		bw := bufio.NewWriterSize(af, 1<<16)
		if err := fill(bw); err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
		if err := af.Commit(); err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
		return nil
	}
	fs, err := openFS(ctx, p)
	if err != nil {
		return err
	}
	defer fs.Close()
	w, err := fs.OpenWrite(ctx, p)
	if err != nil {
		return fmt.Errorf("create %s: %w", p, err)
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	if err := fill(bw); err != nil {
		w.Close()
		return fmt.Errorf("write %s: %w", p, err)
	}
	if err := bw.Flush(); err != nil {
		w.Close()
		return fmt.Errorf("write %s: %w", p, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}
