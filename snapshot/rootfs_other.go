//go:build !linux

package snapshot

import "io/fs"

// rawDirs is empty where folders are listed through os.Root only.
type rawDirs struct{}

// readDirRaw lists through os.Root on this system (ok false).
func (r *RootFS) readDirRaw(string) ([]fs.DirEntry, bool, error) { return nil, false, nil }

// closeRaw has nothing to close on this system.
func (r *RootFS) closeRaw() {}

// statRaw stats through os.Root on this system (ok false).
func (r *RootFS) statRaw(string) (fs.FileInfo, bool) { return nil, false }
