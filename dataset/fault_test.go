package dataset

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/batch"
	"github.com/repoctx/repoctx/internal/faultfs"
	"github.com/repoctx/repoctx/snapshot"
	"github.com/repoctx/repoctx/store"
)

// faultyMethod is repoctx's own method with a fault injected: opening the snapshot
// named fail returns err, as a store or cache write would on a full disk.
type faultyMethod struct {
	inner batch.Method
	fail  string
	err   error
	hits  atomic.Int32
}

func (m *faultyMethod) Open(ctx context.Context, snap snapshot.Snapshot, repo string) (batch.Answerer, error) {
	if snap.Name() == m.fail {
		m.hits.Add(1)
		return nil, m.err
	}
	return m.inner.Open(ctx, snap, repo)
}

// assertStopped checks that err is a stop by a fault of the environment that kept
// the journal with done datapoints and wrote no output.
func assertStopped(t *testing.T, err error, out string, done int) {
	t.Helper()
	if !repoctx.IsEnvironment(err) {
		t.Fatalf("Predict error %v: want a fault of the environment", err)
	}
	var se *StoppedError
	if !errors.As(err, &se) || se.Journal != out+".partial" || se.Done != done {
		t.Fatalf("error %v: want a StoppedError naming %s.partial with %d datapoints done", err, out, done)
	}
	if errors.Is(err, repoctx.ErrSomeFailed) {
		t.Error("a stopped run reports failed datapoints (exit 3) instead of a fault")
	}
	if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("output written for datapoints never tried: %v", err)
	}
	if _, err := os.Stat(out + ".partial"); err != nil {
		t.Errorf("journal not kept: %v", err)
	}
}

// TestPredictStopsOnEnvironmentFault: a method that fails with ENOSPC on the second
// snapshot stops the run after the datapoints of the first; the journal keeps them
// and a resumed run, once the cause is gone, writes the same file as a clean run.
func TestPredictStopsOnEnvironmentFault(t *testing.T) {
	c := cfg(t, 2)
	full := filepath.Join(t.TempDir(), "full.jsonl")
	_, want := predict(t, PredictOptions{DataDir: sampleDir, Lang: "kotlin", Stage: "sample", Out: full, Batch: c})

	src, err := OpenSource(sampleDir, "kotlin", "sample", snapshot.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	for _, fault := range []error{
		&fs.PathError{Op: "write", Path: "/cache/store/x", Err: syscall.ENOSPC},
		&fs.PathError{Op: "open", Path: "/cache/store/x", Err: syscall.EMFILE},
		&fs.PathError{Op: "open", Path: "/cache/store/x", Err: syscall.EROFS},
		repoctx.WriteFault("cannot write the index cache in /cache", &fs.PathError{Op: "mkdir", Path: "/cache/x", Err: syscall.EACCES}),
	} {
		t.Run(fault.Error(), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.jsonl")
			bc := c
			st := store.Open(bc.CacheDir)
			defer st.Close()
			m := &faultyMethod{inner: batch.Repoctx(src, st, bc.Index, bc.Compose, false), fail: "acme__tracker-528745a191d579c8bac4254c06097b43a65d2cf6", err: fault}
			bc.Method = m
			_, err := Predict(context.Background(), PredictOptions{DataDir: sampleDir, Lang: "kotlin", Stage: "sample", Out: out, Batch: bc})
			assertStopped(t, err, out, 2)
			if !strings.Contains(err.Error(), fault.Error()) || !strings.Contains(err.Error(), "resume") {
				t.Errorf("error %q should say %q and how to continue", err, fault)
			}
			sum, got := predict(t, PredictOptions{DataDir: sampleDir, Lang: "kotlin", Stage: "sample", Out: out, Resume: true, Batch: c})
			if sum.Resumed != 2 || strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("resumed %d datapoints (want 2); output equal to a clean run: %v", sum.Resumed, strings.Join(got, "\n") == strings.Join(want, "\n"))
			}
		})
	}
}

// TestPredictFullCacheDisk runs predict with its cache on a tmpfs too small for the
// indexes (skipped when mounting is not permitted): the run stops with a fault of the
// environment, no panic, no output, the journal kept; resumed with room, it writes
// the same file as a clean run.
func TestPredictFullCacheDisk(t *testing.T) {
	c := cfg(t, 2)
	full := filepath.Join(t.TempDir(), "full.jsonl")
	_, want := predict(t, PredictOptions{DataDir: sampleDir, Lang: "kotlin", Stage: "sample", Out: full, Batch: c})
	for _, size := range []int64{48 << 10, 160 << 10} {
		small := c
		small.CacheDir = faultfs.Tmpfs(t, size, false)
		out := filepath.Join(t.TempDir(), "out.jsonl")
		_, err := Predict(context.Background(), PredictOptions{DataDir: sampleDir, Lang: "kotlin", Stage: "sample", Out: out, Batch: small})
		if err == nil {
			t.Fatalf("cache of %d bytes: no error", size)
		}
		var se *StoppedError
		errors.As(err, &se)
		if se == nil {
			t.Fatalf("cache of %d bytes: %v, want a StoppedError", size, err)
		}
		t.Logf("cache of %d bytes: %v", size, err)
		assertStopped(t, err, out, se.Done)
		if !strings.Contains(err.Error(), "no space left on device") {
			t.Errorf("error %q should say the disk is full", err)
		}
		_, got := predict(t, PredictOptions{DataDir: sampleDir, Lang: "kotlin", Stage: "sample", Out: out, Resume: true, Batch: c})
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("cache of %d bytes: the resumed output differs from a clean run", size)
		}
	}
}

// TestPredictReadOnlyCache: a read-only cache folder is one clear fault before any
// datapoint.
func TestPredictReadOnlyCache(t *testing.T) {
	c := cfg(t, 1)
	c.CacheDir = faultfs.Tmpfs(t, 1<<20, true)
	out := filepath.Join(t.TempDir(), "out.jsonl")
	_, err := Predict(context.Background(), PredictOptions{DataDir: sampleDir, Lang: "kotlin", Stage: "sample", Out: out, Batch: c})
	if !repoctx.IsEnvironment(err) || !strings.Contains(err.Error(), "read-only file system") {
		t.Errorf("read-only cache: %v", err)
	}
}

// TestPredictFullOutputDisk: the journal's disk fills up during the run: the batch
// stops at the first line it cannot keep.
func TestPredictFullOutputDisk(t *testing.T) {
	dir := faultfs.Tmpfs(t, 12<<10, false)
	out := filepath.Join(dir, "out.jsonl")
	_, err := Predict(context.Background(), PredictOptions{DataDir: sampleDir, Lang: "kotlin", Stage: "sample", Out: out, Batch: cfg(t, 1)})
	if !repoctx.IsEnvironment(err) || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("full output disk: %v", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("output written: %v", err)
	}
	ro := faultfs.Tmpfs(t, 1<<20, true)
	_, err = Predict(context.Background(), PredictOptions{DataDir: sampleDir, Lang: "kotlin", Stage: "sample", Out: filepath.Join(ro, "out.jsonl"), Batch: cfg(t, 1)})
	if !repoctx.IsEnvironment(err) || !strings.Contains(err.Error(), "read-only file system") {
		t.Errorf("read-only output folder: %v", err)
	}
}
