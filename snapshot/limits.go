package snapshot

import "math"

// Limits bounds what opening and reading a snapshot may cost. A zero (or
// negative, or NaN) field means the value of [DefaultLimits].
type Limits struct {
	// MaxFileBytes is the largest file, in bytes, that Snapshot.ReadFile
	// returns. Larger files stay listed; ReadFile refuses them with an error
	// wrapping ErrTooLarge and never reads more than this many bytes.
	MaxFileBytes int64
	// MaxSnapshotBytes bounds one zipped snapshot, in bytes: both the inner
	// zip itself (which is read into memory when the outer zip compresses it) and the sum of the declared
	// uncompressed sizes of the files it lists that can be read (those over
	// MaxFileBytes are left out; files other than source and ignore files count
	// when first read, see Snapshot.ReadFile). Folders are not bounded.
	MaxSnapshotBytes int64
	// MaxFiles is the most regular files listed for one snapshot; further
	// files are left out and recorded in Snapshot.Skipped.
	MaxFiles int
	// MaxRatio is the highest compression ratio (uncompressed bytes per
	// compressed byte) accepted for an inner zip, both for the inner zip as
	// an entry of the outer zip and for the files it holds as a whole (counted
	// as for MaxSnapshotBytes: a file over MaxFileBytes, which is never read,
	// does not fail the snapshot).
	MaxRatio float64
}

// Default values of [Limits].
const (
	DefaultMaxFileBytes     = 2 << 20 // 2 MiB
	DefaultMaxSnapshotBytes = 2 << 30 // 2 GiB
	DefaultMaxFiles         = 200000
	DefaultMaxRatio         = 200
)

// DefaultLimits returns the default limits: MaxFileBytes 2 MiB,
// MaxSnapshotBytes 2 GiB, MaxFiles 200000 files, MaxRatio 200.
func DefaultLimits() Limits {
	return Limits{
		MaxFileBytes:     DefaultMaxFileBytes,
		MaxSnapshotBytes: DefaultMaxSnapshotBytes,
		MaxFiles:         DefaultMaxFiles,
		MaxRatio:         DefaultMaxRatio,
	}
}

// withDefaults replaces unset fields by their defaults.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = d.MaxFileBytes
	}
	if l.MaxSnapshotBytes <= 0 {
		l.MaxSnapshotBytes = d.MaxSnapshotBytes
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = d.MaxFiles
	}
	if l.MaxRatio <= 0 || math.IsNaN(l.MaxRatio) {
		l.MaxRatio = d.MaxRatio
	}
	return l
}
