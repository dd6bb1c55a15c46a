package serve

import (
	"strings"
	"testing"

	"github.com/repoctx/repoctx"
)

// TestContextPartsText: POST /v1/context gives each part's text, the span the context
// renders for it.
func TestContextPartsText(t *testing.T) {
	ts := startServer(t, []Folder{{Dir: sampleWorkspace(t)}}, nil)
	r := ts.context(t, caller("normalizeLabel"))
	if len(r.Parts) == 0 {
		t.Fatal("no parts")
	}
	for _, p := range r.Parts {
		if p.Text == "" || !strings.Contains(r.Context, repoctx.FileSep+p.Path+"\n"+p.Text) {
			t.Errorf("part %s:%d-%d: text %q is not its span of the context", p.Path, p.StartLine, p.EndLine, p.Text)
		}
	}
}
