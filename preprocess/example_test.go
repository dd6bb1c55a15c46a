package preprocess_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/preprocess"
)

// Chunk a folder of two files into JSON Lines and count the records.
func Example() {
	dir, err := os.MkdirTemp("", "preprocess-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	files := map[string]string{
		"a.py": "def one():\n    return 1\n\n\ndef two():\n    return 2\n",
		"b.py": "class C:\n    def m(self):\n        return 3\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			fmt.Println(err)
			return
		}
	}
	var out bytes.Buffer
	opts := preprocess.Options{Strategy: chunker.StrategyStructural, Workers: 2}
	st, err := preprocess.Run(context.Background(), []string{dir}, opts, preprocess.NewJSONLWriter(&out))
	if err != nil {
		fmt.Println(err)
		return
	}
	records := strings.Count(out.String(), "\n")
	fmt.Printf("%d files, %d records, %d chunks counted\n", st.Total().Files, records, st.Total().Chunks)
	// Output: 2 files, 2 records, 2 chunks counted
}
