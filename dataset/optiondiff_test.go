package dataset

import (
	"strings"
	"testing"

	"github.com/repoctx/repoctx/batch"
)

// TestOptionDiff: a resumed journal's option mismatch names the differing options
// instead of printing two whole option structs (adversarial F12).
func TestOptionDiff(t *testing.T) {
	a := batch.DefaultConfig()
	b := a
	b.Compose.TopK = 3
	b.Compose.Plan.Window = 0
	b.Index.Chunk.MaxChars = 500
	b.LSAPerSnapshot = true
	got := optionDiff(fingerprint(Shard{}, a), fingerprint(Shard{}, b))
	for _, want := range []string{"compose.TopK 16 (journal) vs 3 (this run)", "compose.Plan window 8000 tokens, share by language (python 0.3, others 0.5), suffix share 0.25, context window 16000 tokens (journal) vs off (this run)",
		"index.Chunk.MaxChars 0 (journal) vs 500 (this run)", "lsa-per-snapshot false (journal) vs true (this run)"} {
		if !strings.Contains(got, want) {
			t.Errorf("optionDiff = %q, want it to contain %q", got, want)
		}
	}
	if strings.Count(got, "(journal)") != 4 {
		t.Errorf("optionDiff = %q: want exactly the 4 differing options", got)
	}
	if d := optionDiff(fingerprint(Shard{}, a), fingerprint(Shard{}, a)); d != "" {
		t.Errorf("same options: %q", d)
	}
	c := a
	c.Compose.Languages = []string{"kotlin", "java"}
	if d := optionDiff(fingerprint(Shard{}, a), fingerprint(Shard{}, c)); !strings.Contains(d, "compose.Languages [] (journal) vs [kotlin java] (this run)") {
		t.Errorf("languages: %q", d)
	}
}
