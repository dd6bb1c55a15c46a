package serve

import (
	_ "embed"
	"net/http"
	"slices"
)

// inspectorHTML is the inspector page: one file, no external assets.
//
//go:embed inspector.html
var inspectorHTML []byte

// handleInspector serves the inspector page: pick a workspace file, place the cursor,
// see the context's parts in prompt order with their score and why, the budget, the
// trimmed prefix and suffix, and the file's chunk boundaries. It calls GET /v1/files,
// GET /v1/file, GET /v1/chunks and POST /v1/context.
func (s *Server) handleInspector(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'")
	w.Write(inspectorHTML)
}

// FilesResponse is the body of GET /v1/files: every served workspace with its files.
type FilesResponse struct {
	Workspaces []WorkspaceFiles `json:"workspaces"`
}

// WorkspaceFiles is one workspace's files: slash paths relative to its root, sorted.
type WorkspaceFiles struct {
	Name  string   `json:"name"`
	Root  string   `json:"root"`
	Files []string `json:"files"`
}

// FileResponse is the body of GET /v1/file: a file's text as the workspace holds it
// (its last saved version).
type FileResponse struct {
	Workspace string `json:"workspace"`
	Path      string `json:"path"`
	Text      string `json:"text"`
}

// ChunksResponse is the body of GET /v1/chunks: a file's chunks in the current index.
type ChunksResponse struct {
	Workspace string      `json:"workspace"`
	Path      string      `json:"path"`
	Chunks    []ChunkSpan `json:"chunks"`
}

// ChunkSpan is one chunk of a file: its lines (1-based, inclusive), kind and name.
type ChunkSpan struct {
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
	Kind      string `json:"kind"`
	Name      string `json:"name,omitempty"`
	// Names lists the definitions of a merged chunk, Names[0] being Name (see
	// chunker.Chunk.Names); omitted for a chunk of at most one definition.
	Names []string `json:"names,omitempty"`
}

func (s *Server) handleFiles(w http.ResponseWriter, r *http.Request) {
	out := FilesResponse{Workspaces: []WorkspaceFiles{}}
	for _, ws := range s.ws {
		fs := ws.fileSet()
		files := make([]string, 0, len(fs))
		for p := range fs {
			files = append(files, p)
		}
		slices.Sort(files)
		out.Workspaces = append(out.Workspaces, WorkspaceFiles{Name: ws.name, Root: ws.root, Files: files})
	}
	writeJSON(w, http.StatusOK, out)
}

// fileParam resolves the workspace and path query parameters.
func (s *Server) fileParam(w http.ResponseWriter, r *http.Request) (*Workspace, string, bool) {
	ws, rel, err := s.resolve(r.URL.Query().Get("workspace"), r.URL.Query().Get("path"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return nil, "", false
	}
	return ws, rel, true
}

func (s *Server) handleFile(w http.ResponseWriter, r *http.Request) {
	ws, rel, ok := s.fileParam(w, r)
	if !ok {
		return
	}
	f := ws.fileSet()[rel]
	if f == nil {
		writeError(w, http.StatusNotFound, "path %s is not a file of the workspace %s", rel, ws.name)
		return
	}
	data, err := f.Bytes()
	if err != nil {
		writeError(w, http.StatusConflict, "path %s of the workspace %s: %v (the update is under way)", rel, ws.name, err)
		return
	}
	writeJSON(w, http.StatusOK, FileResponse{Workspace: ws.name, Path: rel, Text: string(data)})
}

func (s *Server) handleChunks(w http.ResponseWriter, r *http.Request) {
	ws, rel, ok := s.fileParam(w, r)
	if !ok {
		return
	}
	view, release := ws.Acquire()
	defer release()
	if view == nil {
		writeError(w, http.StatusServiceUnavailable, "%v", errClosed)
		return
	}
	out := ChunksResponse{Workspace: ws.name, Path: rel, Chunks: []ChunkSpan{}}
	for _, c := range view.Retriever().Chunks() {
		if c.Path == rel {
			out.Chunks = append(out.Chunks, ChunkSpan{StartLine: c.StartLine, EndLine: c.EndLine, Kind: string(c.Kind), Name: c.Name, Names: c.Names})
		}
	}
	slices.SortFunc(out.Chunks, func(a, b ChunkSpan) int { return a.StartLine - b.StartLine })
	writeJSON(w, http.StatusOK, out)
}
