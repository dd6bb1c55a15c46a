// Package inputfile opens and reads the files a user names (command-line arguments
// and flags such as --prefix-file, --tokenizer or a datapoint file) safely: anything
// but a regular file is refused before it is opened, since opening a named pipe
// (FIFO) with no writer blocks forever and a device such as /dev/zero never ends,
// and whole-file reads stop at a limit instead of taking all memory.
//
// The process's own standard input is the one exception: named as "/dev/stdin" (or
// any path to the same file) it is read whatever it is, so `cmd | repoctx tokens
// /dev/stdin` keeps working.
package inputfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// MaxBytes is the default limit of [ReadFile] and [ReadAll]: 64 MiB, far more than
// any source file, prefix or tokenizer.json (about 10 MB for the largest).
const MaxBytes = 64 << 20

// ErrNotRegular is wrapped by the error [Open] returns for a folder, a FIFO, a
// device or a socket.
var ErrNotRegular = errors.New("not a regular file")

// TooLargeError reports input over the limit of [ReadFile] or [ReadAll].
type TooLargeError struct {
	Name  string // the file's name as given, or "standard input"
	Limit int64  // bytes
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than the limit of %d bytes (%d MiB)", e.Name, e.Limit, e.Limit>>20)
}

// Check stats name (following symbolic links) and returns an error naming it when
// it is not a regular file nor the process's standard input: the error wraps
// [ErrNotRegular] and says what the file is; a missing file gives os.Stat's error
// (wrapping fs.ErrNotExist) worded as os.Open's ("open NAME: ...").
func Check(name string) error {
	fi, err := os.Stat(name)
	if err != nil {
		if pe := new(fs.PathError); errors.As(err, &pe) {
			pe.Op = "open" // as os.Open would say
		}
		return err
	}
	if fi.Mode().IsRegular() || isStdin(fi) {
		return nil
	}
	return &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("%w: it is %s", ErrNotRegular, kind(fi.Mode()))}
}

// Open opens name for reading after [Check] accepts it.
func Open(name string) (*os.File, error) {
	if err := Check(name); err != nil {
		return nil, err
	}
	return os.Open(name)
}

// ReadFile reads the file name whole (see [Open]), at most limit bytes (limit <= 0
// means [MaxBytes]); a longer file gives a *[TooLargeError] naming it, after
// limit+1 bytes were read.
func ReadFile(name string, limit int64) ([]byte, error) {
	f, err := Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(f, name, limit)
}

// ReadAll reads r to its end, at most limit bytes (limit <= 0 means [MaxBytes]);
// longer input gives a *[TooLargeError] with name, after limit+1 bytes were read.
func ReadAll(r io.Reader, name string, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = MaxBytes
	}
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &TooLargeError{Name: name, Limit: limit}
	}
	return b, nil
}

// isStdin reports whether fi is the process's standard input.
func isStdin(fi os.FileInfo) bool {
	in, err := os.Stdin.Stat()
	return err == nil && os.SameFile(fi, in)
}

// kind names a file mode that is not a regular file's.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file (mode " + m.String() + ")"
}
