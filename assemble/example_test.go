package assemble_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/assemble"
	"github.com/repoctx/repoctx/index"
	"github.com/repoctx/repoctx/snapshot"
	"github.com/repoctx/repoctx/store"
)

// Open a repository folder and compose the context for one hole: the model is writing
// a new function in invoicing/report.py.
func Example() {
	ctx := context.Background()
	snap, err := snapshot.OpenDir("../testdata/sample/repositories-python-sample/acme__invoicing-3883f317f2454c5c841829b87ede02c71c20ef65", snapshot.Limits{})
	if err != nil {
		log.Fatal(err)
	}
	cache, _ := os.MkdirTemp("", "repoctx-example-") // default: store.DefaultCacheDir()
	defer os.RemoveAll(cache)
	st := store.Open(cache)
	defer st.Close()
	ix, err := index.Open(st, index.RepoID(snap.Name()), index.DefaultOptions())
	if err != nil {
		log.Fatal(err)
	}
	defer ix.Close()
	repo, err := ix.View(ctx, snap) // indexes once; later views and runs reuse the store
	if err != nil {
		log.Fatal(err)
	}
	defer repo.Close()
	hole := repoctx.Hole{
		Path:   "invoicing/report.py",
		Prefix: "from invoicing.models import Invoice\n\n\ndef overdue_total(invoices, today):\n    return sum(inv.gross() for inv in invoices if inv.",
		Suffix: ")\n",
	}
	c, err := assemble.Compose(ctx, repo, hole, assemble.DefaultOptions())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(strings.HasPrefix(c.Text, repoctx.FileSep)) // "<|file_sep|>path\ncontent" parts, best last
	for _, p := range c.Parts {                             // why each part is there; here, the definitions found
		for _, why := range p.Why {
			if strings.HasPrefix(why, "def:") {
				fmt.Println(p.Path, p.StartLine, why)
			}
		}
	}
	// Output:
	// true
	// invoicing/models.py 57 def:gross(same-dir)
	// invoicing/models.py 61 def:Invoice(import)
}
