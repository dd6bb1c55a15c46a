package retrieve

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/internal/faultfs"
)

// manyChunks returns n chunks of distinct code-like text (about 300 bytes each).
func manyChunks(n int) []chunker.Chunk {
	cs := make([]chunker.Chunk, n)
	for i := range cs {
		text := fmt.Sprintf("fun handler%d(request%d: Request): Response {\n", i, i%97)
		for j := range 5 {
			text += fmt.Sprintf("    val field%d_%d = request%d.param(\"name%d\") ?: default%d\n", i, j, i%97, j*i%31, i%13)
		}
		cs[i] = chunk(fmt.Sprintf("src/f%d.kt", i/50), i%50, chunker.KindFunction, fmt.Sprintf("handler%d", i), nil, text+"}")
	}
	return cs
}

// TestBuildFullDisk builds on a tmpfs too small for the index: the error is a fault of
// the environment (whether bleve kept the ENOSPC or panicked on it), and nothing is
// left behind.
func TestBuildFullDisk(t *testing.T) {
	for _, size := range []int64{64 << 10, 512 << 10, 2 << 20} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			cache := faultfs.Tmpfs(t, size, false)
			_, _, err := OpenOrBuild(context.Background(), cache, "k", ctxless(func() ([]chunker.Chunk, error) { return manyChunks(6000), nil }), BuildOptions{})
			if err == nil {
				t.Fatal("OpenOrBuild on a full disk: no error")
			}
			if !repoctx.IsEnvironment(err) {
				t.Fatalf("error %v: not a fault of the environment", err)
			}
			if !strings.Contains(err.Error(), "no space left on device") || !strings.Contains(err.Error(), cache) {
				t.Errorf("error %q should say the disk is full and name the cache", err)
			}
			t.Log(err)
			assertNoLeftovers(t, cache)
		})
	}
}

// TestBuildReadOnlyCache builds into a read-only file system.
func TestBuildReadOnlyCache(t *testing.T) {
	cache := faultfs.Tmpfs(t, 1<<20, true)
	_, _, err := OpenOrBuild(context.Background(), cache, "k", ctxless(func() ([]chunker.Chunk, error) { return testChunks(), nil }), BuildOptions{})
	var ee *repoctx.EnvironmentError
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), "read-only file system") {
		t.Fatalf("error %v: want an EnvironmentError saying read-only file system", err)
	}
}

// panicEmbedder panics while embedding, like a model runtime on a failed allocation.
type panicEmbedder struct{ fakeEmbedder }

func (p *panicEmbedder) Embed([]string, KeepEnd) ([][]float32, []bool, error) {
	panic("embedding failed")
}

// TestBuildRecoversPanics: a panic in the dense part (its own goroutine) or while
// collecting chunks is an error, not a crash; with a writable disk it is not a fault
// of the environment.
func TestBuildRecoversPanics(t *testing.T) {
	emb := &panicEmbedder{fakeEmbedder{id: "panics", dim: 4}}
	err := Build(context.Background(), filepath.Join(t.TempDir(), "x"), "k", testChunks(), BuildOptions{Embedder: emb})
	if err == nil || !strings.Contains(err.Error(), "embedding failed") || repoctx.IsEnvironment(err) {
		t.Errorf("Build with a panicking embedder: %v", err)
	}
	_, _, err = OpenOrBuild(context.Background(), t.TempDir(), "k", ctxless(func() ([]chunker.Chunk, error) { panic("chunker bug") }), BuildOptions{})
	if err == nil || !strings.Contains(err.Error(), "chunker bug") {
		t.Errorf("OpenOrBuild with panicking chunks: %v", err)
	}
}

// TestClassifyBuildError: an error on a writable disk stays as it is; an I/O error of
// the machine becomes an EnvironmentError naming the cache.
func TestClassifyBuildError(t *testing.T) {
	dir := t.TempDir()
	plain := errors.New("retrieve: something else")
	if got := classifyBuildError(dir, plain); got != plain {
		t.Errorf("plain error became %v", got)
	}
	full := fmt.Errorf("retrieve: write chunks: %w", &pathErr)
	got := classifyBuildError(dir, full)
	var ee *repoctx.EnvironmentError
	if !errors.As(got, &ee) || !strings.Contains(ee.Op, dir) {
		t.Errorf("ENOSPC became %v", got)
	}
}

var pathErr = fs.PathError{Op: "write", Path: "/cache/x", Err: syscall.ENOSPC}
