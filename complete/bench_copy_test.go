package complete

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/repoctx/repoctx"
)

// BenchmarkCopyLines measures CopyLines on a context of about 100 KB: this module's
// Go files under complete/ and assemble/, each a part with its path line, the query
// the end of one of them. It reports MB/s of context.
func BenchmarkCopyLines(b *testing.B) {
	var sb strings.Builder
	for _, dir := range []string{".", "../assemble"} {
		paths, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, p := range paths {
			text, err := os.ReadFile(p)
			if err != nil {
				b.Fatal(err)
			}
			sb.WriteString(repoctx.FileSep + p + "\n")
			sb.Write(text)
		}
	}
	context := sb.String()
	if len(context) > 100_000 {
		context = context[len(context)-100_000:]
	}
	prefix := context[:len(context)/2]
	if i := strings.LastIndexByte(prefix, '\n'); i > 0 {
		prefix = prefix[:i+1]
	}
	b.SetBytes(int64(len(context)))
	for b.Loop() {
		CopyLines(prefix, context, 3)
	}
}
