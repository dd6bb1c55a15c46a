// Package atomicfile writes files so that a reader sees either the old content or
// the whole new one, never a part: the content goes to a temporary file in the
// target's folder, which is renamed over the target once complete. It is the one
// temp-file-and-rename writer of the project (store records, prediction files and
// their journals, dataset zips, charts).
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Options configures a write. The zero value writes mode 0644 without syncing.
type Options struct {
	// Sync makes the write durable: the file is fsynced before the rename and the
	// folder after it (where the system allows syncing a folder).
	Sync bool
	// Perm is the file's mode; 0 means 0644.
	Perm fs.FileMode
	// MkdirAll creates the target's folder (mode 0755) when it is missing.
	MkdirAll bool
	// RenameOpen renames the temporary file while it is still open and closes it
	// afterwards (the default closes first), so that a lock the writer took on it
	// (flock) is held until the file has its final name: a cleaner that removes
	// unlocked temporary files as a killed writer's cannot take it in between.
	// Needs a system that renames open files (not Windows). Meant for targets with
	// names of their own: when closing fails after the rename, the target is
	// removed, so an earlier file of that name is gone too.
	RenameOpen bool
	// Replace writes a target that is not a regular file or a folder (a device, a
	// named pipe, a symbolic link to one) like any other, renaming the temporary file
	// over its name, instead of in place: for files a program owns (a cache's), where
	// anything else in their place is damage and opening it could wait for ever (a
	// named pipe without a reader).
	Replace bool
}

// TempPrefix starts the name of every temporary file this package creates, after
// a dot: ".{base}.tmp-". Cleaners of a folder (a cache's garbage collector) can
// recognise leftovers of killed writers by it.
const TempPrefix = ".tmp-"

// File is a file being written atomically: write to it, then Commit (rename into
// place) or Abort (remove). Exactly one of them must be called; both may be
// called again after the first, doing nothing.
type File struct {
	*os.File
	path    string
	opts    Options
	done    bool
	inPlace bool // the target is a device or a pipe, written directly
}

// Create starts an atomic write of path. The error (from creating the folder or
// the temporary file) is returned as the os package gives it, naming the folder; a
// missing folder (without Options.MkdirAll) is named as such, wrapping
// fs.ErrNotExist.
//
// A target that exists and is not a regular file or a folder (/dev/null, /dev/stdout,
// a named pipe) is opened and written in place, not atomically: renaming a file over
// it would replace the device for every program on the machine (Options.Replace
// does it nonetheless).
func Create(path string, opts Options) (*File, error) {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() && !opts.Replace {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		return &File{File: f, path: path, opts: opts, inPlace: true}, nil
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if opts.MkdirAll {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	f, err := os.CreateTemp(dir, "."+strings.TrimPrefix(base, ".")+TempPrefix+"*")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			// Name the missing folder, not the temporary file in it.
			return nil, fmt.Errorf("the folder %s does not exist (%w)", filepath.Clean(dir), err)
		}
		return nil, err
	}
	return &File{File: f, path: path, opts: opts}, nil
}

// Commit sets the mode, syncs when asked, closes the temporary file and renames it
// over the target (renames, then closes, with Options.RenameOpen). On error the
// temporary file is removed and the target is left as it was, except when closing
// fails after a RenameOpen rename: the target is then removed (see RenameOpen).
func (f *File) Commit() error {
	if f.done {
		return nil
	}
	f.done = true
	if f.inPlace {
		return f.Close()
	}
	perm := f.opts.Perm
	if perm == 0 {
		perm = 0o644
	}
	err := f.Chmod(perm)
	if err == nil && f.opts.Sync {
		err = f.Sync()
	}
	if f.opts.RenameOpen {
		if err == nil {
			err = os.Rename(f.Name(), f.path)
		}
		if cerr := f.Close(); err == nil && cerr != nil {
			os.Remove(f.path) // renamed, but its last bytes may be lost
			return cerr
		}
	} else {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(f.Name(), f.path)
		}
	}
	if err != nil {
		os.Remove(f.Name())
		return err
	}
	if f.opts.Sync {
		if d, err := os.Open(filepath.Dir(f.path)); err == nil {
			d.Sync() // not every system can sync a folder
			d.Close()
		}
	}
	return nil
}

// Abort closes and removes the temporary file; the target is left as it was.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.Close()
	if !f.inPlace {
		os.Remove(f.Name())
	}
}

// Write writes path atomically with write, which fills the temporary file. The
// error is write's, or the system's (not wrapped: callers name the file).
func Write(path string, write func(io.Writer) error, opts Options) error {
	f, err := Create(path, opts)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

// WriteFile writes data to path atomically (see Write).
func WriteFile(path string, data []byte, opts Options) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}, opts)
}

// IsTemp reports whether name (a base name) is a temporary file of this package.
func IsTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, TempPrefix)
}
