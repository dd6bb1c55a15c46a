package batch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/snapshot"
)

// flakyDrafter fails every draft of a hole whose prefix holds "fail".
type flakyDrafter struct{}

func (flakyDrafter) Draft(_ context.Context, h repoctx.Hole, _ repoctx.Context) (string, error) {
	if strings.Contains(h.Prefix, "fail") {
		return "", errors.New("draft endpoint: connection refused")
	}
	return "total = compute_total(items)", nil
}

// TestRunDraftFailures: with a Drafter, every datapoint is answered; the drafts
// asked and those that failed are counted in the Summary, logged as warnings, and
// the user's OnDraft still sees each.
func TestRunDraftFailures(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "o__r-1", "shop", "cart.py")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte("def compute_total(items):\n    return sum(i.price for i in items)\n\n\ndef checkout(items):\n    total = compute_total(items)\n    return total\n"), 0o644)
	src, err := snapshot.OpenDirSource(dir, snapshot.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var dps []Datapoint
	for i, pre := range []string{"def pay(items):\n    ", "def fail_pay(items):\n    ", "def refund(items):\n    ", "def fail_refund(items):\n    "} {
		dps = append(dps, Datapoint{ID: fmt.Sprint(i), Repo: "o/r", Revision: "1", Path: "shop/pay.py", Prefix: pre, Suffix: "\n"})
	}
	cfg := DefaultConfig()
	cfg.CacheDir = t.TempDir()
	cfg.Workers = 2
	cfg.Compose.Iterations, cfg.Compose.Drafter = 2, flakyDrafter{}
	var mu sync.Mutex
	seen := 0
	cfg.Compose.OnDraft = func(repoctx.Hole, error) { mu.Lock(); seen++; mu.Unlock() }
	var log bytes.Buffer
	cfg.Log = &syncWriter{w: &log}
	n := 0
	sum, err := Run(context.Background(), src, FromSlice(dps), cfg, func(r Result) {
		if r.Err != nil {
			t.Errorf("datapoint %s failed: %v", r.ID, r.Err)
		}
		n++
	})
	if err != nil || n != len(dps) {
		t.Fatalf("Run: %v, %d results", err, n)
	}
	if sum.Drafts != 4 || sum.DraftFailures != 2 || sum.Failed != 0 {
		t.Errorf("summary drafts %d, failed drafts %d, failed datapoints %d; want 4, 2, 0", sum.Drafts, sum.DraftFailures, sum.Failed)
	}
	if seen != 4 {
		t.Errorf("the caller's OnDraft saw %d drafts, want 4", seen)
	}
	if got := strings.Count(log.String(), "warning: shop/pay.py: draft failed"); got != 2 {
		t.Errorf("log has %d draft warnings, want 2:\n%s", got, log.String())
	}
	// Without a Drafter (the built-in one) nothing is counted.
	cfg.Compose.Drafter, cfg.Compose.OnDraft = nil, nil
	sum, err = Run(context.Background(), src, FromSlice(dps), cfg, func(Result) {})
	if err != nil || sum.Drafts != 0 || sum.DraftFailures != 0 {
		t.Errorf("built-in drafter: %v, drafts %d/%d", err, sum.Drafts, sum.DraftFailures)
	}
}

// syncWriter serialises writes.
type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
