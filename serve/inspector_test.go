package serve

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestInspector: the page and its JSON endpoints; with --upstream, GET / is the model
// server's and the page moves to /repoctx/inspector.
func TestInspector(t *testing.T) {
	dir := sampleWorkspace(t)
	// Small sibling functions, merged into one chunk that lists their names.
	if err := os.WriteFile(filepath.Join(dir, "Ops.kt"), []byte("package ops\n\nfun kind(x: Int) = x\nfun root(x: Int) = x\nfun dir(x: Int) = x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, []Folder{{Dir: dir}}, nil)
	resp := send(t, "GET", ts.url+"/", nil)
	if page := readAll(t, resp); resp.StatusCode != 200 || !strings.Contains(page, "<title>repoctx inspector</title>") || strings.Contains(page, "src=\"http") {
		t.Fatalf("GET /: %d %.200s", resp.StatusCode, page)
	}
	var files FilesResponse
	resp = send(t, "GET", ts.url+"/v1/files", nil)
	if err := json.NewDecoder(resp.Body).Decode(&files); err != nil || len(files.Workspaces) != 1 {
		t.Fatalf("GET /v1/files: %v %+v", err, files)
	}
	path := utilDir + "/Extensions.kt"
	if !slices.Contains(files.Workspaces[0].Files, path) || slices.Contains(files.Workspaces[0].Files, "secret/Hidden.kt") {
		t.Errorf("files %v", files.Workspaces[0].Files)
	}
	q := "?path=" + url.QueryEscape(path)
	var f FileResponse
	resp = send(t, "GET", ts.url+"/v1/file"+q, nil)
	if err := json.NewDecoder(resp.Body).Decode(&f); err != nil || !strings.Contains(f.Text, "fun String.normalizeLabel()") {
		t.Errorf("GET /v1/file: %v %.100q", err, f.Text)
	}
	var ch ChunksResponse
	resp = send(t, "GET", ts.url+"/v1/chunks"+q, nil)
	if err := json.NewDecoder(resp.Body).Decode(&ch); err != nil || len(ch.Chunks) == 0 {
		t.Fatalf("GET /v1/chunks: %v %+v", err, ch)
	}
	lines := strings.Count(f.Text, "\n") + 1
	for i, c := range ch.Chunks {
		if c.StartLine < 1 || c.EndLine < c.StartLine || c.EndLine > lines || i > 0 && c.StartLine < ch.Chunks[i-1].StartLine {
			t.Errorf("chunk %+v of a %d-line file", c, lines)
		}
	}
	ch = ChunksResponse{}
	resp = send(t, "GET", ts.url+"/v1/chunks?path=Ops.kt", nil)
	if err := json.NewDecoder(resp.Body).Decode(&ch); err != nil || len(ch.Chunks) != 1 ||
		ch.Chunks[0].Name != "kind" || !slices.Equal(ch.Chunks[0].Names, []string{"kind", "root", "dir"}) {
		t.Errorf("GET /v1/chunks of merged functions: %v %+v", err, ch)
	}
	if resp := send(t, "GET", ts.url+"/v1/file?path=nope.kt", nil); resp.StatusCode != 404 {
		t.Errorf("missing file: %d", resp.StatusCode)
	}
	// With the proxy on.
	ps, _, _ := proxyServer(t, nil)
	if resp := send(t, "GET", ps.url+"/", nil); !strings.Contains(readAll(t, resp), `"content":"value"`) {
		t.Error("GET / with --upstream is not the model server's")
	}
	if resp := send(t, "GET", ps.url+"/repoctx/inspector", nil); !strings.Contains(readAll(t, resp), "repoctx inspector") {
		t.Error("no inspector at /repoctx/inspector with --upstream")
	}
}
