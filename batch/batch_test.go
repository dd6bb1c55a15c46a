package batch

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/internal/atomicfile"
	"github.com/repoctx/repoctx/snapshot"
)

// fakeMethod answers "<snapshot>:<id>" after a random delay and counts openings.
type fakeMethod struct {
	opens    atomic.Int32
	inFlight atomic.Int32
	maxIn    atomic.Int32
	fail     string // datapoint ID whose answer fails
}

func (m *fakeMethod) Open(_ context.Context, snap snapshot.Snapshot, _ string) (Answerer, error) {
	m.opens.Add(1)
	return &fakeAnswerer{m: m, name: snap.Name()}, nil
}

type fakeAnswerer struct {
	m    *fakeMethod
	name string
}

func (a *fakeAnswerer) Answer(ctx context.Context, d *Datapoint) (repoctx.Context, error) {
	n := a.m.inFlight.Add(1)
	defer a.m.inFlight.Add(-1)
	for {
		old := a.m.maxIn.Load()
		if n <= old || a.m.maxIn.CompareAndSwap(old, n) {
			break
		}
	}
	time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond)
	if d.ID == a.m.fail {
		return repoctx.Context{}, errors.New("boom")
	}
	return repoctx.Context{Text: a.name + ":" + d.ID}, nil
}

func (a *fakeAnswerer) Close() error { return nil }

// testSource writes snapshot folders o__r-1 .. o__r-n holding one Python file each.
func testSource(t *testing.T, n int) snapshot.Source {
	t.Helper()
	dir := t.TempDir()
	for i := 1; i <= n; i++ {
		p := filepath.Join(dir, fmt.Sprintf("o__r-%d", i), "a.py")
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("x = 1\n"), 0o644)
	}
	src, err := snapshot.OpenDirSource(dir, snapshot.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// countingSeq yields dps (with line numbers) and counts how many were read.
func countingSeq(dps []Datapoint, errs map[int]error, read *atomic.Int32) iter.Seq2[Datapoint, error] {
	return func(yield func(Datapoint, error) bool) {
		for i, d := range dps {
			read.Add(1)
			d.Line = i + 1
			if !yield(d, errs[i]) {
				return
			}
		}
	}
}

// TestRunOrder: results come in input order, one per datapoint not skipped, with
// bad lines, missing snapshots and failed answers as errors naming the datapoint;
// a snapshot is opened once for a run of its datapoints; the datapoints held at once
// stay within about 2 x workers.
func TestRunOrder(t *testing.T) {
	src := testSource(t, 3)
	var dps []Datapoint
	for i := range 60 {
		rev := 1 + i/20 // runs of 20 datapoints per snapshot
		dps = append(dps, Datapoint{ID: fmt.Sprint("d", i), Repo: "o/r", Revision: fmt.Sprint(rev), Path: "a.py", Prefix: "x"})
	}
	dps[7].Revision = "404"
	errs := map[int]error{3: errors.New("bad line")}
	m := &fakeMethod{fail: "d11"}
	var read atomic.Int32
	cfg := Config{Method: m, Workers: 3, Skip: func(i int) bool { return i == 5 }}
	var got []Result
	sum, err := Run(context.Background(), src, countingSeq(dps, errs, &read), cfg, func(r Result) {
		if ahead := int(read.Load()) - len(got); ahead > 2*cfg.Workers+2 {
			t.Errorf("%d datapoints read ahead of the output, want at most about %d", ahead, 2*cfg.Workers)
		}
		got = append(got, r)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 59 || sum.Datapoints != 60 || sum.Skipped != 1 || sum.Failed != 3 {
		t.Fatalf("%d results, summary %+v", len(got), sum)
	}
	prev := -1
	for _, r := range got {
		if r.Index <= prev || r.Index == 5 {
			t.Fatalf("result %d after %d", r.Index, prev)
		}
		prev = r.Index
		want := fmt.Sprintf("o__r-%d:d%d", 1+r.Index/20, r.Index)
		switch r.Index {
		case 3, 7, 11:
			if r.Err == nil || r.Context.Text != "" {
				t.Errorf("datapoint %d: %v %q, want an error", r.Index, r.Err, r.Context.Text)
			}
		default:
			if r.Err != nil || r.Context.Text != want {
				t.Errorf("datapoint %d: %q %v, want %q", r.Index, r.Context.Text, r.Err, want)
			}
		}
	}
	byIndex := map[int]Result{}
	for _, r := range got {
		byIndex[r.Index] = r
	}
	if err := byIndex[7].Err; err == nil || !strings.Contains(err.Error(), "datapoint d7 (line 8)") || !errors.Is(err, snapshot.ErrNoSnapshot) {
		t.Errorf("missing snapshot error %v", err)
	}
	if err := byIndex[11].Err; err == nil || !strings.Contains(err.Error(), "d11") || !strings.Contains(err.Error(), "boom") {
		t.Errorf("failed answer error %v", err)
	}
	if n := m.opens.Load(); n != 3 {
		t.Errorf("%d snapshot openings, want 3 (one per run of datapoints)", n)
	}
	if n := m.maxIn.Load(); n > int32(cfg.Workers) {
		t.Errorf("%d answers at once with %d workers", n, cfg.Workers)
	}
}

// TestRunReadError: an error ending the sequence without a datapoint stops the run
// and is returned after the results before it.
func TestRunReadError(t *testing.T) {
	src := testSource(t, 1)
	boom := errors.New("disk read failed")
	seq := func(yield func(Datapoint, error) bool) {
		for i := range 5 {
			if !yield(Datapoint{ID: fmt.Sprint(i), Repo: "o/r", Revision: "1", Path: "a.py", Line: i + 1}, nil) {
				return
			}
		}
		yield(Datapoint{}, boom)
	}
	n := 0
	_, err := Run(context.Background(), src, seq, Config{Method: &fakeMethod{}, Workers: 2}, func(Result) { n++ })
	if !errors.Is(err, boom) || n != 5 {
		t.Errorf("err %v after %d results, want the read error after 5", err, n)
	}
}

// TestRunWorkersBound: more than MaxWorkers workers is an option error, before any
// datapoint is read (each worker's channel slots and goroutine cost memory).
func TestRunWorkersBound(t *testing.T) {
	read := false
	seq := func(yield func(Datapoint, error) bool) { read = true }
	_, err := Run(context.Background(), testSource(t, 1), seq, Config{Method: &fakeMethod{}, Workers: MaxWorkers + 1}, func(Result) {})
	var oe *repoctx.OptionError
	if !errors.As(err, &oe) || oe.Option != "workers" || read {
		t.Errorf("Workers %d: err %v, read %v; want a workers option error and nothing read", MaxWorkers+1, err, read)
	}
}

// TestRunCancel cancels a run of the real method while it indexes: Run returns
// context.Canceled within a second and leaves no temporary file in the cache.
func TestRunCancel(t *testing.T) {
	dir := t.TempDir()
	for s := 1; s <= 2; s++ {
		for f := range 500 {
			p := filepath.Join(dir, fmt.Sprintf("o__r-%d", s), "pkg", fmt.Sprintf("m%03d.py", f))
			os.MkdirAll(filepath.Dir(p), 0o755)
			body := strings.Repeat(fmt.Sprintf("def f%d_%d(x):\n    return x + %d\n\n", s, f, f), 20)
			os.WriteFile(p, []byte(body), 0o644)
		}
	}
	src, err := snapshot.OpenDirSource(dir, snapshot.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var dps []Datapoint
	for i := range 8 {
		dps = append(dps, Datapoint{ID: fmt.Sprint(i), Repo: "o/r", Revision: fmt.Sprint(1 + i%2), Path: "pkg/m001.py", Prefix: "def f(x):\n    return "})
	}
	cfg := DefaultConfig()
	cfg.CacheDir = t.TempDir()
	cfg.Workers = 2
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	var mu sync.Mutex
	n := 0
	_, err = Run(ctx, src, FromSlice(dps), cfg, func(Result) { mu.Lock(); n++; mu.Unlock() })
	took := time.Since(start)
	if n == len(dps) && err == nil {
		t.Skip("the whole run finished before the cancel")
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run after cancel: %v (%d results), want context.Canceled", err, n)
	}
	if took > 300*time.Millisecond+time.Second {
		t.Errorf("Run returned %v after the start, %v after the cancel", took, took-300*time.Millisecond)
	}
	filepath.WalkDir(cfg.CacheDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && (atomicfile.IsTemp(d.Name()) || strings.Contains(d.Name(), ".tmp-")) {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}
