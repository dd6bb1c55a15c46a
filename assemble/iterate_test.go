package assemble

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/index"
)

// fakeDrafter returns a fixed draft (or error) and records the contexts it saw.
type fakeDrafter struct {
	draft string
	err   error
	block bool // wait for ctx to be done, then return its error
	panic bool

	mu   sync.Mutex
	seen []repoctx.Context
}

func (f *fakeDrafter) Draft(ctx context.Context, h repoctx.Hole, c repoctx.Context) (string, error) {
	f.mu.Lock()
	f.seen = append(f.seen, c)
	f.mu.Unlock()
	if f.panic {
		panic("drafter bug")
	}
	if f.block {
		<-ctx.Done()
		return "", ctx.Err()
	}
	return f.draft, f.err
}

func (f *fakeDrafter) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.seen)
}

// iterRepo is a repository where the hole's prefix matches the parsers, while the
// code that completes it (a call of the ledger API) is in a file the prefix shares
// no word with.
func iterRepo(t *testing.T) *index.View {
	return buildIndex(t, map[string]string{
		"app/parse_a.py": "# the header row\ndef parse_header(line):\n    fields = line.split(',')\n    return fields[0]\n",
		"app/parse_b.py": "def parse_footer(line):\n    fields = line.split(';')\n    return fields[-1]\n",
		"app/parse_c.py": "def parse_body(line):\n    fields = line.split('|')\n    return fields[1:]\n",
		"app/ledger.py": "class Ledger:\n    def post_journal_entry(self, debit_account, credit_account, amount_cents):\n" +
			"        self.entries.append((debit_account, credit_account, amount_cents))\n",
	})
}

var iterHole = repoctx.Hole{
	Path:   "app/import_rows.py",
	Prefix: "def import_row(line, book):\n    fields = line.split(',')\n    ",
	Suffix: "\n",
}

// iterOptions: BM25 only, one hit per query, no sources but retrieval, so that
// the first round cannot reach the ledger.
func iterOptions(it int, d Drafter) Options {
	return with(func(o *Options) {
		o.TopK, o.NoDense, o.NoDefinitions, o.NoOldFile, o.NoRelative = 1, true, true, true, true
		o.Iterations, o.Drafter = it, d
	})
}

// TestIterationsDraftRetrieved: the draft's text is what the second round
// retrieves, its hit ends up in the context next to the first round's parts, and a
// third round drafts from the second round's context.
func TestIterationsDraftRetrieved(t *testing.T) {
	r := iterRepo(t)
	first, err := Compose(context.Background(), r, iterHole, iterOptions(1, nil))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(first.Text, "post_journal_entry") {
		t.Fatalf("the first round already finds the ledger; the test needs a harder repository:\n%s", first.Text)
	}
	fd := &fakeDrafter{draft: "book.post_journal_entry(debit_account, credit_account, amount_cents)"}
	var events []error
	opts := iterOptions(2, fd)
	opts.OnDraft = func(h repoctx.Hole, err error) { events = append(events, err) }
	got, err := Compose(context.Background(), r, iterHole, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got.Text, "def post_journal_entry") {
		t.Fatalf("the draft's match is not in the context:\n%s", got.Text)
	}
	var why []string
	for _, p := range got.Parts {
		if p.Path == "app/ledger.py" {
			why = p.Why
		}
	}
	if len(why) != 1 || !strings.HasPrefix(why[0], "draft2#1") {
		t.Errorf("ledger part found by %q, want draft2#1", why)
	}
	if fd.calls() != 1 || fd.seen[0].Text != first.Text {
		t.Errorf("drafter called %d times; it must see the first round's context", fd.calls())
	}
	if len(events) != 1 || events[0] != nil {
		t.Errorf("OnDraft events %v, want one success", events)
	}
	// The first round's parts stay: the draft's hits are fused in, not swapped in.
	for _, p := range first.Parts {
		if !strings.Contains(got.Text, p.Text) {
			t.Errorf("first-round part %s:%d lost", p.Path, p.StartLine)
		}
	}
	// A third round drafts from the second context (the same draft: the context
	// is unchanged, and the loop ends).
	fd3 := &fakeDrafter{draft: fd.draft}
	got3, err := Compose(context.Background(), r, iterHole, iterOptions(3, fd3))
	if err != nil {
		t.Fatal(err)
	}
	if got3.Text != got.Text || fd3.calls() != 2 || fd3.seen[1].Text != got.Text {
		t.Errorf("round 3: %d drafts, context changed %v", fd3.calls(), got3.Text != got.Text)
	}
}

// TestIterationsOneIsOnePass: Iterations 0 and 1 give the same context and never
// ask the drafter.
func TestIterationsOneIsOnePass(t *testing.T) {
	r := iterRepo(t)
	fd := &fakeDrafter{draft: "post_journal_entry", panic: true}
	for _, plan := range []int{0, 500} {
		var texts []string
		for _, it := range []int{0, 1} {
			o := iterOptions(it, fd)
			o.Plan.Window = plan
			c, err := Compose(context.Background(), r, iterHole, o)
			if err != nil {
				t.Fatal(err)
			}
			texts = append(texts, c.Text)
		}
		if texts[0] != texts[1] {
			t.Errorf("plan %d: Iterations 0 and 1 differ", plan)
		}
	}
	if fd.calls() != 0 {
		t.Errorf("drafter called %d times with one round", fd.calls())
	}
}

// TestDraftFailureFallsBack: a failing drafter (error, blank draft, panic) is
// reported to OnDraft and the round uses the built-in drafter's draft: the context
// is the one a nil Drafter gives.
func TestDraftFailureFallsBack(t *testing.T) {
	r := iterRepo(t)
	builtin, err := Compose(context.Background(), r, iterHole, iterOptions(2, nil))
	if err != nil {
		t.Fatal(err)
	}
	if !whyHas(builtin.Parts, "draft2#") {
		t.Fatalf("the built-in drafter's round found nothing: %+v", builtin.Parts)
	}
	for name, fd := range map[string]*fakeDrafter{
		"error": {err: errors.New("connection refused")},
		"blank": {draft: " \n"},
		"panic": {panic: true},
	} {
		t.Run(name, func(t *testing.T) {
			var events []error
			o := iterOptions(2, fd)
			o.OnDraft = func(h repoctx.Hole, err error) {
				if h.Path != iterHole.Path {
					t.Errorf("OnDraft got hole %s", h.Path)
				}
				events = append(events, err)
			}
			got, err := Compose(context.Background(), r, iterHole, o)
			if err != nil {
				t.Fatalf("a failed draft failed the composition: %v", err)
			}
			if len(events) != 1 || events[0] == nil {
				t.Fatalf("OnDraft events %v, want one failure", events)
			}
			if got.Text != builtin.Text || !reflect.DeepEqual(got.Parts, builtin.Parts) {
				t.Errorf("fallback context differs from the built-in drafter's:\n%+v\n%+v", got.Parts, builtin.Parts)
			}
		})
	}
}

// TestIterationsCancel: a drafter that waits for the context ends the composition
// with ctx's error when it is cancelled, and the cancelled draft is not reported as
// a failed one.
func TestIterationsCancel(t *testing.T) {
	r := iterRepo(t)
	ctx, cancel := context.WithCancel(context.Background())
	fd := &fakeDrafter{block: true}
	o := iterOptions(3, fd)
	reported := 0
	o.OnDraft = func(repoctx.Hole, error) { reported++ }
	done := make(chan error, 1)
	go func() {
		_, err := Compose(ctx, r, iterHole, o)
		done <- err
	}()
	for fd.calls() == 0 {
		select {
		case err := <-done:
			t.Fatalf("Compose returned %v before drafting", err)
		default:
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Compose after cancel = %v, want context.Canceled", err)
	}
	if reported != 0 {
		t.Errorf("a cancelled draft was reported %d times", reported)
	}
	// Cancelled before the second round: no draft is asked for.
	fd2 := &fakeDrafter{draft: "x"}
	if _, err := Compose(ctx, r, iterHole, iterOptions(2, fd2)); !errors.Is(err, context.Canceled) || fd2.calls() != 0 {
		t.Errorf("Compose with a done context = %v after %d drafts", err, fd2.calls())
	}
}

// whyHas reports whether a part's Why has an entry starting with prefix.
func whyHas(parts []repoctx.Part, prefix string) bool {
	for _, p := range parts {
		for _, w := range p.Why {
			if strings.HasPrefix(w, prefix) {
				return true
			}
		}
	}
	return false
}

func TestCopyDrafter(t *testing.T) {
	prefix := "def f(line):\n    fields = line.split(',')\n    "
	c := repoctx.Context{Parts: []repoctx.Part{
		{Path: "a.py", Text: "# parsers\ndef f(line):\n    fields = line.split(',')\n    return fields[0]\n    # done\n", Score: 1},
		{Path: "b.py", Text: "y = 1\nx = 1\nfields = split(line)\nkeep(fields)\n", Score: 2},
	}}
	c.Text = render(c.Parts)
	got, err := CopyDrafter{Lines: 2}.Draft(context.Background(), repoctx.Hole{Prefix: prefix}, c)
	if err != nil {
		t.Fatal(err)
	}
	// The best window overall (a.py's) gives two lines; the top part (b.py, the
	// last) adds the line after its own best window; a.py's lines are not repeated.
	if want := "return fields[0]\n# done\nkeep(fields)"; got != want {
		t.Errorf("draft %q, want %q", got, want)
	}
	if got, _ := (CopyDrafter{Lines: 2, TopParts: -1}).Draft(context.Background(), repoctx.Hole{Prefix: prefix}, c); got != "return fields[0]\n# done" {
		t.Errorf("without top parts: %q", got)
	}
	// The prefix override is what the model is given.
	p := "nothing in common\n"
	c.Prefix = &p
	if got, _ := (CopyDrafter{}).Draft(context.Background(), repoctx.Hole{Prefix: prefix}, c); got != "" {
		t.Errorf("draft %q with a prefix override sharing no token", got)
	}
}

func TestIterationsValidate(t *testing.T) {
	var oe *repoctx.OptionError
	if err := with(func(o *Options) { o.Iterations = -1 }).Validate(); !errors.As(err, &oe) || oe.Option != "iterations" {
		t.Errorf("Iterations -1: %v", err)
	}
	if err := with(func(o *Options) { o.DraftWeight = -1 }).Validate(); !errors.As(err, &oe) || oe.Option != "draft-weight" {
		t.Errorf("DraftWeight -1: %v", err)
	}
}

func TestTopKBound(t *testing.T) {
	var oe *repoctx.OptionError
	if err := with(func(o *Options) { o.TopK = MaxTopK }).Validate(); err != nil {
		t.Errorf("TopK %d: %v", MaxTopK, err)
	}
	if err := with(func(o *Options) { o.TopK = MaxTopK + 1 }).Validate(); !errors.As(err, &oe) || oe.Option != "top-k" || !strings.Contains(oe.Want, "10000") {
		t.Errorf("TopK %d: %v", MaxTopK+1, err)
	}
}

func TestIterationsBound(t *testing.T) {
	var oe *repoctx.OptionError
	if err := with(func(o *Options) { o.Iterations = MaxIterations }).Validate(); err != nil {
		t.Errorf("Iterations %d: %v", MaxIterations, err)
	}
	if err := with(func(o *Options) { o.Iterations = MaxIterations + 1 }).Validate(); !errors.As(err, &oe) || oe.Option != "iterations" {
		t.Errorf("Iterations %d: %v", MaxIterations+1, err)
	}
}
