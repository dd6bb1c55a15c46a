// Package faultfs gives tests folders whose file system fails the way a machine
// does: a small tmpfs that fills up (ENOSPC) or a read-only one (EROFS). Mounting
// needs Linux and the right to mount (root, or CAP_SYS_ADMIN in a user and mount
// namespace); without it the test is skipped.
package faultfs

import "testing"

// Tmpfs mounts a tmpfs of size bytes on a new temporary folder and returns the
// folder; readOnly mounts it read-only. It is unmounted when the test ends. The test
// is skipped when mounting is not permitted.
func Tmpfs(t testing.TB, size int64, readOnly bool) string {
	t.Helper()
	dir := t.TempDir()
	if err := mount(dir, size, readOnly); err != nil {
		t.Skipf("cannot mount a tmpfs (%v): run the test as root to cover full and read-only disks", err)
	}
	t.Cleanup(func() {
		if err := unmount(dir); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}
