// Package serve keeps workspace folders live for editors and answers completion
// points over HTTP (`repoctx serve`): each folder is an in-memory snapshot of the
// files the repository walker lets through, updated file by file as the folder
// changes, and its current view (index.Index.View) answers every request in
// milliseconds.
//
// # API
//
// POST /v1/context takes a [ContextRequest] (the completion file's path and either the
// prefix and suffix, or the whole buffer with a cursor: line and column, 1-based,
// column in Unicode code points, or a UTF-8 byte offset) and returns a
// [ContextResponse] (the context, its parts, and the prefix and suffix when the budget
// planner trimmed them). GET /v1/status returns a [StatusResponse]; GET /healthz
// returns {"status":"ok"}. Errors are an [ErrorResponse] with a message naming the
// field at fault. docs/openapi.yaml describes the API.
//
// POST /v1/continue/context answers Continue's HTTP context provider. GET / (without a
// proxy; GET /repoctx/inspector always) is the inspector page, which uses GET
// /v1/files, /v1/file and /v1/chunks. With Config.Proxy.Upstream, the server is also a
// fill-in-the-middle proxy for editors (proxy.go; docs/editors.md): POST /infill and
// POST /v1/completions get the repository context and go to the model server, every
// other path passes through unchanged.
//
// # Design note: the live update
//
// A workspace holds its files as a map of path -> bytes and SHA-256, its repository's
// [index.Index] (one per workspace, over the server's one store), and a view: the
// [index.View] the index makes of a frozen copy of that map (snapshot.NewMem: a
// [snapshot.Snapshot] over memory that is also a [snapshot.Hasher], so a view neither
// reads nor hashes a file). The index runs with RepoLSA on: the repository's one LSA
// model (fitted on the first view, or read from the cache) embeds every later view,
// and the index keeps every file version's chunks, symbols and vectors in memory, so a
// new view after an edit chunks and embeds only the changed files and rebuilds the
// BM25 postings and the symbol table from memory.
//
// At the start the walk takes from the folder's walk state (snapshot.FolderState, in
// the store, shared with `repoctx index` and `query` when their walk options are the
// same) the hash of every file whose size, times and inode did not change, without
// reading it: its bytes are read when first needed, and kept: by the first view for
// the files whose chunks are not stored, by the inspector for the file it shows, and
// by locate, whose first request (one without a path) reads every file. Reading them
// all in the background after the start was tried: it slowed the requests of the
// first seconds (p95 at 20,000 files). A read whose bytes no longer hash as recorded,
// or of a path no longer a regular file, fails: the file is left out of that view (or
// that answer), as is every file the poll after the first view finds changed, and
// the update takes it again, even when its hash is the recorded one (it changed back).
//
// The first view itself is read back whole when `repoctx index` stored one of the
// same files under the same options (index.ViewsPrepared: the read starts beside the
// walk, and no later view is read back or stored): chunks, postings, vectors and
// symbols used in place from the mapped file, so the start costs the walk rather than
// the view. Such a view's chunks are not in the index's memory: the first view made
// after a change reads every file's records once (answers go on from the stored view
// meanwhile), and later changes cost what they cost after any start.
//
// On a save: fsnotify reports events for the folder (every folder the walker goes
// into is watched, the first walk's once the server listens, before the poll after
// the first view; ignored, vendored and .git folders are not); their paths are
// noted; once the folder has been quiet for the debounce interval (50 ms; a steady
// stream of changes is applied at least every second) the noted paths are walked with
// the walker restricted to them (snapshot.WalkFS over a view of the folder whose
// listings hold only the entries on the way to those paths, so every ignore rule
// applies exactly as for the whole folder); files found are read and hashed, files no
// longer found are dropped; if any file of the view changed, a new view is opened and
// swapped in. Requests hold the view they started with: the old view is closed when
// the last of them ends. A change of a .gitignore, .ignore or .git/info/exclude walks
// the whole folder again, as does a burst of more than 256 changed paths. When the
// system refuses more watches (inotify's ENOSPC) the workspace says so once and
// polls instead: it stats the files and folders it knows every PollInterval, and reads
// again those whose modification time was too recent to trust when last read (racyWindow).
//
// A long-lived server must not grow with every save: the store records of edits are
// written once a minute (index.Options.DeferFlush), not as one segment file per edit,
// and once the index holds more chunks of old file versions than the view (and at
// least 5,000) a new index is opened, made from the store, while requests go on with
// the old one's views.
package serve
