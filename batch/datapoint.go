package batch

import (
	"iter"
	"strconv"
	"strings"

	"github.com/repoctx/repoctx"
)

// Datapoint is one completion point of a batch: a hole in a file of a repository
// snapshot, as the competition's datapoint files describe it (package dataset reads
// them). Path is slash-separated and relative to the repository root; the reader
// checks that it cannot leave it.
type Datapoint struct {
	ID       string   `json:"id"`       // may be empty: the competition's starter kit has none
	Repo     string   `json:"repo"`     // "owner/name"
	Revision string   `json:"revision"` // commit of the snapshot
	Path     string   `json:"path"`     // completion file
	Modified []string `json:"modified"` // files changed by the change, as read (not validated)
	Prefix   string   `json:"prefix"`   // file text before the cursor
	Suffix   string   `json:"suffix"`   // file text after the completion
	Line     int      `json:"-"`        // 1-based line in its file, for messages; 0 if none
}

// SnapshotName returns "{owner}__{repo}-{revision}": Repo with "/" replaced by "__", a
// dash, and Revision. It is the name of the snapshot in a [snapshot.Source] (the inner
// zip's name without ".zip", or the unpacked folder's name).
func (d *Datapoint) SnapshotName() string {
	return RepoPrefix(d.Repo) + d.Revision
}

// RepoPrefix returns the start of the snapshot names of repo: "{owner}__{repo}-".
func RepoPrefix(repo string) string { return strings.ReplaceAll(repo, "/", "__") + "-" }

// Hole returns the datapoint's completion point.
func (d *Datapoint) Hole() repoctx.Hole {
	return repoctx.Hole{Path: d.Path, Prefix: d.Prefix, Suffix: d.Suffix, Modified: d.Modified}
}

// Name returns how messages name the datapoint: "datapoint ID (line N)", without the
// parts it lacks.
func (d *Datapoint) Name() string {
	s := "datapoint"
	if d.ID != "" {
		s += " " + d.ID
	}
	if d.Line > 0 {
		s += " (line " + strconv.Itoa(d.Line) + ")"
	}
	return s
}

// FromSlice returns the datapoints of dps as the sequence [Run] reads, without errors.
func FromSlice(dps []Datapoint) iter.Seq2[Datapoint, error] {
	return func(yield func(Datapoint, error) bool) {
		for _, d := range dps {
			if !yield(d, nil) {
				return
			}
		}
	}
}
