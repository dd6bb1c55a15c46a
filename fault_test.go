package repoctx

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"
)

func TestIsEnvironment(t *testing.T) {
	path := func(op string, e syscall.Errno) error { return &fs.PathError{Op: op, Path: "/x", Err: e} }
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"plain", errors.New("boom"), false},
		{"ENOSPC wrapped", fmt.Errorf("index: %w", path("write", syscall.ENOSPC)), true},
		{"EDQUOT", path("write", syscall.EDQUOT), true},
		{"EROFS", path("open", syscall.EROFS), true},
		{"EMFILE", path("open", syscall.EMFILE), true},
		{"ENFILE", path("open", syscall.ENFILE), true},
		{"EACCES reading: the input's fault", path("open", syscall.EACCES), false},
		{"EACCES writing the cache", WriteFault("cannot write the cache", path("mkdir", syscall.EACCES)), true},
		{"ENOENT writing: not the machine", WriteFault("cannot write", path("open", syscall.ENOENT)), false},
		{"recovered I/O panic", Recovered("build", path("write", syscall.ENOSPC)), true},
		{"recovered bug", Recovered("build", "index out of range"), false},
	} {
		if got := IsEnvironment(tc.err); got != tc.want {
			t.Errorf("%s: IsEnvironment(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
	e := WriteFault("cannot write the index cache in /c", path("write", syscall.ENOSPC))
	if e.Error() != "cannot write the index cache in /c: write /x: no space left on device" || !errors.Is(e, syscall.ENOSPC) {
		t.Errorf("WriteFault: %q", e)
	}
	if WriteFault("again", e) != e {
		t.Error("WriteFault wrapped an EnvironmentError twice")
	}
}
