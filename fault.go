package repoctx

import (
	"errors"
	"fmt"
	"syscall"
)

// EnvironmentError reports a fault of the machine a command runs on rather than of
// its input: no space left on a device, a disk quota exceeded, a read-only file
// system, too many open files, no memory, or permission denied where the program
// writes (its cache folder, its output). Every later datapoint would fail the same
// way, so a batch stops at the first one (keeping what lets a rerun continue, such as
// predict's journal) and commands exit with status 1. Test with [IsEnvironment].
type EnvironmentError struct {
	// Op says what failed in the user's words, e.g. "write the index cache in
	// /home/u/.cache/repoctx".
	Op string
	// Err is the underlying error (an *os.PathError, a syscall.Errno, ...).
	Err error
}

func (e *EnvironmentError) Error() string {
	if e.Op == "" {
		return e.Err.Error()
	}
	return e.Op + ": " + e.Err.Error()
}

func (e *EnvironmentError) Unwrap() error { return e.Err }

// machineErrnos are the errors that no input can cause, wherever they happen.
var machineErrnos = []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT, syscall.EROFS, syscall.EMFILE, syscall.ENFILE, syscall.ENOMEM}

// IsEnvironment reports whether err is or wraps an [*EnvironmentError], or wraps one
// of the errors of the machine that no input can cause, wherever they happen:
// ENOSPC, EDQUOT, EROFS, EMFILE, ENFILE, ENOMEM. Permission denied (EACCES, EPERM) is
// a fault of the environment only where the program writes, marked with
// [WriteFault]; reading an unreadable snapshot is a fault of that snapshot.
func IsEnvironment(err error) bool {
	if err == nil {
		return false
	}
	if errors.As(err, new(*EnvironmentError)) {
		return true
	}
	for _, e := range machineErrnos {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// WriteFault returns err as an [*EnvironmentError] with op when err arose writing
// where the program keeps its files (a cache folder, an output file) and wraps
// ENOSPC, EDQUOT, EROFS, EMFILE, ENFILE, ENOMEM, EACCES or EPERM; otherwise, and for
// nil, it returns err unchanged.
func WriteFault(op string, err error) error {
	if err == nil || errors.As(err, new(*EnvironmentError)) {
		return err
	}
	if IsEnvironment(err) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM) {
		return &EnvironmentError{Op: op, Err: err}
	}
	return err
}

// Recovered turns a value recovered from a panic into an error saying what was
// being done (op); a recovered error is wrapped, so that [IsEnvironment] sees an
// I/O error a library panicked with.
func Recovered(op string, r any) error {
	if err, ok := r.(error); ok {
		return fmt.Errorf("%s: panic: %w", op, err)
	}
	return fmt.Errorf("%s: panic: %v", op, r)
}
