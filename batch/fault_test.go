package batch

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/index"
	"github.com/repoctx/repoctx/snapshot"
)

// fakeSnap is a snapshot with a name only (faultMethod reads nothing from it).
type fakeSnap struct {
	snapshot.Snapshot
	name string
}

func (s fakeSnap) Name() string { return s.name }

// fakeSource holds the snapshots named; openErr, if set, fails opening some.
type fakeSource struct {
	names   []string
	openErr func(name string) error
}

func (s *fakeSource) Open(name string) (snapshot.Snapshot, error) {
	if s.openErr != nil {
		if err := s.openErr(name); err != nil {
			return nil, err
		}
	}
	return fakeSnap{name: name}, nil
}
func (s *fakeSource) Names() []string { return s.names }
func (s *fakeSource) Close() error    { return nil }

// faultMethod answers each datapoint with its ID as context; openErr and answerErr
// inject faults, panicOn makes Answer panic for one datapoint ID.
type faultMethod struct {
	openErr  func(snap string) error
	panicOn  string
	failures int // CacheWriteFailures each opening reports
	opened   atomic.Int32
}

func (m *faultMethod) Open(_ context.Context, snap snapshot.Snapshot, _ string) (Answerer, error) {
	m.opened.Add(1)
	if m.openErr != nil {
		if err := m.openErr(snap.Name()); err != nil {
			return nil, err
		}
	}
	return &faultAnswerer{m: m}, nil
}

type faultAnswerer struct{ m *faultMethod }

func (a *faultAnswerer) Answer(_ context.Context, d *Datapoint) (repoctx.Context, error) {
	if d.ID == a.m.panicOn {
		var s []int
		_ = s[len(d.ID)] // an index out of range, as bleve's builder once did
	}
	return repoctx.Context{Text: d.ID}, nil
}
func (a *faultAnswerer) Close() error { return nil }
func (a *faultAnswerer) stats() index.Stats {
	return index.Stats{CacheWriteFailures: a.m.failures}
}

// fakeDatapoints returns n datapoints, two per snapshot "o__r-{i/2}".
func fakeDatapoints(n int) ([]Datapoint, []string) {
	var dps []Datapoint
	var names []string
	for i := range n {
		d := Datapoint{ID: fmt.Sprint("d", i), Repo: "o/r", Revision: fmt.Sprint(i / 2), Path: "a.py", Line: i + 1}
		dps = append(dps, d)
		if i%2 == 0 {
			names = append(names, d.SnapshotName())
		}
	}
	return dps, names
}

// runFake runs dps and returns the emitted results.
func runFake(t *testing.T, src snapshot.Source, m Method, dps []Datapoint) ([]Result, Summary, error) {
	t.Helper()
	var got []Result
	sum, err := Run(context.Background(), src, FromSlice(dps), Config{Method: m, Workers: 3}, func(r Result) { got = append(got, r) })
	return got, sum, err
}

func indexes(rs []Result) []int {
	var out []int
	for _, r := range rs {
		out = append(out, r.Index)
	}
	return out
}

// TestRunStopsOnEnvironmentFault: a method failing on the third snapshot with a
// fault of the machine stops the batch there: the results before its first datapoint
// are emitted, no later one, and the error says what happened.
func TestRunStopsOnEnvironmentFault(t *testing.T) {
	faults := []struct {
		name string
		err  error
	}{
		{"ENOSPC", &fs.PathError{Op: "write", Path: "/cache/x", Err: syscall.ENOSPC}},
		{"EROFS", &fs.PathError{Op: "open", Path: "/cache/x", Err: syscall.EROFS}},
		{"EMFILE", &fs.PathError{Op: "open", Path: "/cache/x", Err: syscall.EMFILE}},
		{"EACCES on the cache", repoctx.WriteFault("cannot write the index cache in /cache", &fs.PathError{Op: "mkdir", Path: "/cache/x", Err: syscall.EACCES})},
	}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			dps, names := fakeDatapoints(10)
			m := &faultMethod{openErr: func(snap string) error {
				if snap == names[2] {
					return f.err
				}
				return nil
			}}
			got, sum, err := runFake(t, &fakeSource{names: names}, m, dps)
			if !repoctx.IsEnvironment(err) {
				t.Fatalf("Run error %v: want a fault of the environment", err)
			}
			if !strings.Contains(err.Error(), "datapoint d4") || !strings.Contains(err.Error(), f.err.Error()) {
				t.Errorf("error %q should name datapoint d4 and say %q", err, f.err)
			}
			if want := []int{0, 1, 2, 3}; !slices.Equal(indexes(got), want) {
				t.Errorf("emitted %v, want %v", indexes(got), want)
			}
			if sum.Failed != 0 || len(sum.Errors) != 0 {
				t.Errorf("summary counts %d failed (%v): the fault is not a datapoint's", sum.Failed, sum.Errors)
			}
		})
	}
}

// TestRunSnapshotFaults: a snapshot the source cannot open because of the machine
// (too many open files) stops the batch; one it cannot read (permission denied on
// the snapshot, a fault of that snapshot) only fails its datapoints.
func TestRunSnapshotFaults(t *testing.T) {
	dps, names := fakeDatapoints(8)
	emfile := &fakeSource{names: names, openErr: func(n string) error {
		if n == names[1] {
			return &fs.PathError{Op: "open", Path: "data/" + n + ".zip", Err: syscall.EMFILE}
		}
		return nil
	}}
	got, _, err := runFake(t, emfile, &faultMethod{}, dps)
	if !repoctx.IsEnvironment(err) || !slices.Equal(indexes(got), []int{0, 1}) {
		t.Errorf("EMFILE opening a snapshot: err %v, emitted %v; want a stop after [0 1]", err, indexes(got))
	}

	eacces := &fakeSource{names: names, openErr: func(n string) error {
		if n == names[1] {
			return &fs.PathError{Op: "open", Path: "data/" + n + ".zip", Err: syscall.EACCES}
		}
		return nil
	}}
	got, sum, err := runFake(t, eacces, &faultMethod{}, dps)
	if err != nil || len(got) != 8 || sum.Failed != 2 || got[2].Err == nil || got[3].Err == nil {
		t.Errorf("EACCES on one snapshot: err %v, %d results, %d failed; want 8 results, 2 failed", err, len(got), sum.Failed)
	}
}

// TestRunRecoversPanics: a method panicking on one datapoint fails that datapoint.
func TestRunRecoversPanics(t *testing.T) {
	dps, names := fakeDatapoints(6)
	got, sum, err := runFake(t, &fakeSource{names: names}, &faultMethod{panicOn: "d3"}, dps)
	if err != nil || len(got) != 6 || sum.Failed != 1 {
		t.Fatalf("err %v, %d results, %d failed; want 6 results, 1 failed", err, len(got), sum.Failed)
	}
	if e := got[3].Err; e == nil || !strings.Contains(e.Error(), "panic") || !strings.Contains(e.Error(), "d3") {
		t.Errorf("datapoint d3: error %v, want a panic naming it", e)
	}
}

// TestSummaryCountsCacheWriteFailures: the failed cache writes each opening reports
// (index.Stats.CacheWriteFailures) add up in the summary.
func TestSummaryCountsCacheWriteFailures(t *testing.T) {
	dps, names := fakeDatapoints(6)
	m := &faultMethod{failures: 2}
	_, sum, err := runFake(t, &fakeSource{names: names}, m, dps)
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 * int(m.opened.Load()); sum.CacheWriteFailures != want || want == 0 {
		t.Errorf("CacheWriteFailures = %d, want %d (2 per opening)", sum.CacheWriteFailures, want)
	}
}
