package dataset

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/repoctx/repoctx/assemble"
	"github.com/repoctx/repoctx/batch"
	"github.com/repoctx/repoctx/index"
)

// TestOptionDiff: a resumed journal's option mismatch names the differing options
// instead of printing two whole option records.
func TestOptionDiff(t *testing.T) {
	a := batch.DefaultConfig()
	b := a
	b.Compose.TopK = 3
	b.Compose.Plan.Window = 0
	b.Index.Chunk.MaxChars = 500
	b.LSAPerSnapshot = true
	got := optionDiff(Fingerprint(a), Fingerprint(b))
	for _, want := range []string{"compose.top_k 16 (journal) vs 3 (this run)", "compose.plan_window 8000 (journal) vs 0 (this run)",
		"index.Chunk.MaxChars 0 (journal) vs 500 (this run)", "lsa_per_snapshot false (journal) vs true (this run)"} {
		if !strings.Contains(got, want) {
			t.Errorf("optionDiff = %q, want it to contain %q", got, want)
		}
	}
	if strings.Count(got, "(journal)") != 4 {
		t.Errorf("optionDiff = %q: want exactly the 4 differing options", got)
	}
	if d := optionDiff(Fingerprint(a), Fingerprint(a)); d != "" {
		t.Errorf("same options: %q", d)
	}
	c := a
	c.Compose.Languages = []string{"kotlin", "java"}
	if d := optionDiff(Fingerprint(a), Fingerprint(c)); !strings.Contains(d, `compose.languages null (journal) vs ["kotlin","java"] (this run)`) {
		t.Errorf("languages: %q", d)
	}
}

// TestFingerprintRecordsTable: the journal's option record is JSON holding every
// option of assemble.OptionTable by its JSON name.
func TestFingerprintRecordsTable(t *testing.T) {
	var rec struct {
		Compose map[string]any `json:"compose"`
	}
	if err := json.Unmarshal(Fingerprint(batch.DefaultConfig()), &rec); err != nil {
		t.Fatal(err)
	}
	for _, s := range assemble.OptionTable {
		if _, ok := rec.Compose[s.JSON]; !ok {
			t.Errorf("the option record has no compose.%s", s.JSON)
		}
	}
}

// TestResumeOldJournal: a journal whose header holds the options as text (the
// format before the JSON record) is refused with a message naming it and saying
// what to do, not compared field by field.
func TestResumeOldJournal(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.jsonl")
	old := `{"n":4,"config":"workspace {Repo: Strategy:structural} compose {QueryLines:8 TopK:16} datapoints=0123456789abcdef"}` + "\n" +
		`{"i":0,"line":"{\"context\":\"x\"}"}` + "\n"
	if err := os.WriteFile(out+journalSuffix, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := CreateOutputConfig(out, 4, true, journalHeader(Shard{}, batch.DefaultConfig(), "0123456789abcdef"))
	if err == nil || !strings.Contains(err.Error(), out+journalSuffix) || !strings.Contains(err.Error(), "older version") || !strings.Contains(err.Error(), "delete it, or run without resume") {
		t.Errorf("resume from a text-option journal: %v", err)
	}
	// Without resume it is replaced.
	o, err := CreateOutputConfig(out, 4, false, journalHeader(Shard{}, batch.DefaultConfig(), "0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	o.Abort()
}

// TestFingerprintWithoutStoredViews: whether views are stored (index.Options.StoreViews,
// --no-stored-view) changes where a view comes from, not a prediction, so it is not in
// the option record: a run resumes the journal of a run with the other setting.
func TestFingerprintWithoutStoredViews(t *testing.T) {
	a, b := batch.DefaultConfig(), batch.DefaultConfig()
	a.Index.StoreViews, b.Index.StoreViews = index.ViewsNotStored, index.ViewsStoredOnRepeat
	if fa, fb := string(Fingerprint(a)), string(Fingerprint(b)); fa != fb {
		t.Errorf("the option records differ by StoreViews:\n%s\n%s", fa, fb)
	}
}
