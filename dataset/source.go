package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/repoctx/repoctx/internal/pathsafe"
	"github.com/repoctx/repoctx/snapshot"
)

// OpenSource opens the snapshots of one {lang}-{stage} set in dataDir: the folder
// dataDir/repositories-{lang}-{stage}/ if it exists ([snapshot.OpenDirSource]),
// otherwise the zip of zips dataDir/{lang}-{stage}.zip ([snapshot.OpenZipSource]).
//
// It returns an error naming the files when lang or stage is not a plain name, when
// neither the folder nor the zip exists (wrapping fs.ErrNotExist), or when the zip
// cannot be opened or is corrupt or truncated.
func OpenSource(dataDir, lang, stage string, lim snapshot.Limits) (snapshot.Source, error) {
	if !pathsafe.SafeComponent(lang) || !pathsafe.SafeComponent(stage) {
		return nil, fmt.Errorf("dataset: language %q and stage %q must be plain names (letters, digits, '.', '_', '-')", lang, stage)
	}
	set := lang + "-" + stage
	dir := filepath.Join(dataDir, "repositories-"+set)
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		return snapshot.OpenDirSource(dir, lim)
	}
	zipPath := filepath.Join(dataDir, set+".zip")
	if _, err := os.Lstat(zipPath); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("dataset: no snapshots for %s: neither %s nor %s exists: %w", set, dir, zipPath, fs.ErrNotExist)
	}
	return snapshot.OpenZipSource(zipPath, lim)
}
