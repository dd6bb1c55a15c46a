package faultfs

import (
	"fmt"
	"syscall"
)

func mount(dir string, size int64, readOnly bool) error {
	var flags uintptr = syscall.MS_NOSUID | syscall.MS_NODEV
	if readOnly {
		flags |= syscall.MS_RDONLY
	}
	return syscall.Mount("tmpfs", dir, "tmpfs", flags, fmt.Sprintf("size=%d,mode=0755", size))
}

func unmount(dir string) error { return syscall.Unmount(dir, syscall.MNT_DETACH) }
