package dataset

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/repoctx/repoctx/snapshot"
)

// realDataDir returns the shared data folder, skipping the test without it.
func realDataDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join("..", "..", "shared", "data")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no shared data at %s: %v", dir, err)
	}
	return dir
}

var realSets = []struct {
	sub, lang, stage string
	truth            bool
}{
	{"dev", "kotlin", "dev", true},
	{"dev", "python", "dev", true},
	{"starter-kit", "python", "start", false},
}

// TestRealData opens every snapshot that the real datapoints name, from
// several goroutines, and checks that each completion file is in its
// snapshot and readable.
func TestRealData(t *testing.T) {
	base := realDataDir(t)
	for _, set := range realSets {
		t.Run(set.lang+"-"+set.stage, func(t *testing.T) {
			dir := filepath.Join(base, set.sub)
			jsonl := filepath.Join(dir, set.lang+"-"+set.stage+".jsonl")
			dps, errs, err := ReadDatapointsFile(jsonl)
			if err != nil {
				t.Fatal(err)
			}
			if len(dps) == 0 {
				t.Fatal("no datapoints")
			}
			for i, e := range errs {
				if e != nil {
					t.Errorf("datapoint %d: %v", i, e)
				}
				if d := dps[i]; d.ID == "" || d.Prefix == "" && d.Suffix == "" {
					t.Logf("line %d: id %q, prefix %d bytes, suffix %d bytes (accepted)", d.Line, d.ID, len(d.Prefix), len(d.Suffix))
				}
			}
			src, err := OpenSource(dir, set.lang, set.stage, snapshot.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			names := src.Names()

			type result struct {
				files, skipped, modifiedMissing int
				bytes                           int64
				tooLarge                        []string
			}
			results := make([]result, len(dps))
			var wg sync.WaitGroup
			sem := make(chan struct{}, 4)
			for i := range dps {
				d := &dps[i]
				wg.Add(1)
				sem <- struct{}{}
				go func() {
					defer func() { <-sem; wg.Done() }()
					if _, found := slices.BinarySearch(names, d.SnapshotName()); !found {
						t.Errorf("line %d: snapshot %s not in Names", d.Line, d.SnapshotName())
					}
					s, err := src.Open(d.SnapshotName())
					if err != nil {
						t.Errorf("line %d (%s): %v", d.Line, d.ID, err)
						return
					}
					if _, ok := s.Size(d.Path); !ok {
						t.Errorf("line %d (%s): completion file %s missing from snapshot %s", d.Line, d.ID, d.Path, s.Name())
					} else if _, err := s.ReadFile(d.Path); err != nil {
						t.Errorf("line %d (%s): %v", d.Line, d.ID, err)
					}
					r := &results[i]
					for _, m := range d.Modified {
						if _, ok := s.Size(m); !ok {
							r.modifiedMissing++
							t.Logf("line %d (%s): modified file %s not in the snapshot", d.Line, d.ID, m)
						}
					}
					r.files, r.skipped = len(s.Paths()), len(s.Skipped())
					for _, p := range s.Paths() {
						n, _ := s.Size(p)
						r.bytes += n
						if i%4 != 0 {
							continue // reading every file of every snapshot is slow under -race
						}
						if _, err := s.ReadFile(p); errors.Is(err, snapshot.ErrTooLarge) {
							r.tooLarge = append(r.tooLarge, p)
						} else if err != nil {
							t.Errorf("snapshot %s: %v", s.Name(), err)
						}
					}
				}()
			}
			wg.Wait()
			var files, skipped, missing int
			var total int64
			for i, r := range results {
				files += r.files
				skipped += r.skipped
				missing += r.modifiedMissing
				total += r.bytes
				if len(r.tooLarge) > 0 {
					t.Logf("snapshot %s: over MaxFileBytes: %q", dps[i].SnapshotName(), r.tooLarge)
				}
			}
			t.Logf("%d datapoints, %d snapshots in the source; per datapoint on average %d files, %d bytes; %d skipped entries; %d modified files not in their snapshot",
				len(dps), len(names), files/len(dps), total/int64(len(dps)), skipped, missing)

			if set.truth {
				truth, err := ReadTruth(filepath.Join(dir, set.lang+"-"+set.stage+".truth.jsonl"))
				if err != nil {
					t.Fatal(err)
				}
				if len(truth) != len(dps) {
					t.Errorf("%d truth lines for %d datapoints", len(truth), len(dps))
				}
				for _, d := range dps {
					if _, ok := truth[d.ID]; !ok {
						t.Errorf("datapoint %s has no truth", d.ID)
					}
				}
			}
		})
	}
}

func BenchmarkOpenRealSnapshot(b *testing.B) {
	dir := filepath.Join(realDataDir(b), "dev")
	src, err := OpenSource(dir, "python", "dev", snapshot.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	names := src.Names()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := src.Open(names[i%len(names)]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpenSource(b *testing.B) {
	dir := filepath.Join(realDataDir(b), "dev")
	for b.Loop() {
		src, err := OpenSource(dir, "kotlin", "dev", snapshot.Limits{})
		if err != nil {
			b.Fatal(err)
		}
		src.Close()
	}
}
