package batch

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/repoctx/repoctx/assemble"
	"github.com/repoctx/repoctx/index"
	"github.com/repoctx/repoctx/snapshot"
	"github.com/repoctx/repoctx/store"
)

// TestCrossRepoDefinitions: with Config.CrossRepo, a datapoint of an app repository
// that imports a function of a library repository of the same source gets the
// function's definition part from the library's first snapshot.
func TestCrossRepoDefinitions(t *testing.T) {
	dir := t.TempDir()
	for p, text := range map[string]string{
		"acme__app-abcdef1/main.py":             "from geomlib.area import polygon_area_shoelace\n\n\ndef report(shape):\n    return 1\n",
		"acme__geomlib-abcdef2/geomlib/area.py": "def polygon_area_shoelace(points):\n    return 0.0\n",
	} {
		p = filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src, err := snapshot.OpenDirSource(dir, snapshot.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	dp := Datapoint{Repo: "acme/app", Revision: "abcdef1", Path: "main.py",
		Prefix: "from geomlib.area import polygon_area_shoelace\n\n\ndef report(shape):\n    area = polygon_area_shoelace(", Suffix: ")\n"}
	for _, cross := range []bool{false, true} {
		st := store.Open(t.TempDir())
		m := Repoctx(src, st, index.DefaultOptions(), assemble.DefaultOptions(), false)
		m.(*repoctxMethod).crossRepo = cross
		snap, err := src.Open(dp.SnapshotName())
		if err != nil {
			t.Fatal(err)
		}
		a, err := m.Open(context.Background(), snap, index.RepoID(dp.SnapshotName()))
		if err != nil {
			t.Fatal(err)
		}
		c, err := a.Answer(context.Background(), &dp)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, p := range c.Parts {
			found = found || p.Path == "acme/geomlib/geomlib/area.py" && slices.Contains(p.Why, "def:polygon_area_shoelace(cross-repo import)") &&
				strings.Contains(p.Text, "def polygon_area_shoelace(points):")
		}
		if found != cross {
			t.Errorf("cross-repo %v: library definition part found %v: %+v", cross, found, c.Parts)
		}
		a.Close()
		m.(interface{ Close() error }).Close()
		st.Close()
	}
}
