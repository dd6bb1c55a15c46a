package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// progressEvery is how often a progress line is written where no bar is drawn, at
// most (besides one line per 10%).
const progressEvery = 30 * time.Second

// progress shows how far a long command is: a bar on a terminal; elsewhere (logs,
// CI) one line per 10% of the total, or per progressEvery when the total is unknown
// or the steps are slow, and a last line when done. It is safe for concurrent use.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	what  string // e.g. "predict kotlin-dev"
	unit  string // e.g. "datapoints"
	total int    // -1: unknown
	bar   *progressbar.ProgressBar
	start time.Time
	last  time.Time // of the last line written
	tenth int       // the last 10% step written
	done  int
	wrote bool             // whether a line was written
	now   func() time.Time // for tests
}

// newProgress starts a progress report on w of a job of total units (-1: unknown);
// the bar is drawn only when w is a terminal.
func newProgress(w io.Writer, what, unit string, total int) *progress {
	p := &progress{w: w, what: what, unit: unit, total: total, now: time.Now}
	p.start = p.now()
	p.last = p.start
	if isTerminal(w) {
		p.bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(what),
			progressbar.OptionShowCount(), progressbar.OptionSetItsString(unit), progressbar.OptionShowIts(),
			progressbar.OptionSetPredictTime(total > 0), progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(), progressbar.OptionSpinnerType(14))
	}
	return p
}

// set records that done units are finished.
func (p *progress) set(done int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = done
	if p.bar != nil {
		_ = p.bar.Set(done)
		return
	}
	now := p.now()
	step := -1
	if p.total > 0 {
		step = 10 * done / p.total
	}
	if step > p.tenth && step < 10 || now.Sub(p.last) >= progressEvery {
		p.tenth = max(p.tenth, step)
		p.line(now)
	}
}

// add records n more finished units.
func (p *progress) add(n int) {
	p.mu.Lock()
	done := p.done + n
	p.mu.Unlock()
	p.set(done)
}

// line writes one progress line (p.mu held).
func (p *progress) line(now time.Time) {
	p.last, p.wrote = now, true
	if p.total > 0 {
		fmt.Fprintf(p.w, "%s: %d%% (%d of %d %s), %.0fs\n", p.what, 100*p.done/p.total, p.done, p.total, p.unit, now.Sub(p.start).Seconds())
		return
	}
	fmt.Fprintf(p.w, "%s: %d %s, %.0fs\n", p.what, p.done, p.unit, now.Sub(p.start).Seconds())
}

// finish ends the report: it clears the bar; a report without a bar that wrote any
// line writes the last one (100%).
func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		_ = p.bar.Finish()
		return
	}
	if p.wrote {
		p.line(p.now())
	}
}
