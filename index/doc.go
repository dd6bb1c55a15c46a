// Package index makes repository snapshots searchable: one [Index] per repository
// holds the chunks, symbols and vectors of every file version its snapshots have
// shown it, and each snapshot gets a [View] over it, the retrieval index and symbol
// table that context assembly (package assemble) composes from.
//
// The flow:
//
//	st := store.Open(cacheDir)                // the on-disk records (package store)
//	ix, err := index.Open(st, repo, opts)     // one repository, held by the caller
//	v, err := ix.View(ctx, snap)              // one revision (package snapshot)
//	c, err := assemble.Compose(ctx, v, hole, assemble.DefaultOptions())
//	v.Close(); ix.Close(); st.Close()
//
// A view hashes the snapshot's files (or takes their hashes from the snapshot or
// from the store, see snapshot.Hasher); a file version the index has not seen is
// chunked (tree-sitter, package chunker), its terms counted, its symbols extracted
// from the same parse and its chunk texts embedded (the built-in LSA model, or a
// sentence encoder), and all of it is kept in the store under keys of the content and
// every setting that shapes it: a later view, a later edit or a later run pays only
// for the files that changed. The view's BM25 statistics and, by default, its LSA fit
// are its own, so a view ranks exactly as an index of that snapshot alone would
// ([Options.RepoLSA] and [Options.SharedLSA] share one fit between the views instead:
// an editor's edits, a dataset's revisions). [Index.Update] brings the store up to
// date without making a view (`repoctx index`).
//
// The caller decides how long an index lives: it only grows (every file version a
// view held stays in memory), so a long-running caller (`repoctx serve`) opens a new
// one now and then and closes the old one; `repoctx predict` keeps one per repository
// while its snapshots are answered. There is no registry of indexes in the package.
// The store's records, written as segment files that any number of processes share,
// outlive them; a cache of another format is detected and rebuilt, never misread.
package index
