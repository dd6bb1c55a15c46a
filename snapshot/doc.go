// Package snapshot reads repository revisions: each is a [Snapshot], a read-only
// file system (io/fs) of one revision's files with slash paths relative to its root,
// whatever it is made of.
//
// Three kinds exist:
//
//   - a folder on disk: [OpenDir] lists it (every regular file, .git left out),
//     [OpenFolder] walks it with the repository walker's rules first (see below);
//   - an inner zip of the competition's zip of zips, read in place (or into memory
//     when the outer zip compresses it) and never unpacked: a [Source] ([OpenZipSource], or [OpenDirSource] for a folder of
//     snapshot folders) opens a snapshot by name ("{owner}__{repo}-{revision}");
//   - memory: [NewMem] freezes files an editor's live workspace holds.
//
// Opening and reading are bounded ([Limits]: file size, snapshot size, file count,
// compression ratio) and refuse hostile content (zip-slip names, duplicate entries,
// zip bombs, symlinks leaving the root or looping): what is refused is listed in
// [Snapshot.Skipped], never read.
//
// The walker ([Walk], [WalkFS]) decides which files of a folder are source worth
// indexing: .gitignore, .ignore and .git/info/exclude apply as git applies them,
// vendored folders, generated, minified and binary files are skipped, each skip with
// its [SkipReason]. `repoctx chunk`, `index`, `query` and `serve` all see a folder
// through it.
//
// A snapshot that knows its files' hashes says so ([Hasher]: a walked folder, a
// memory snapshot; [Digester]: an inner zip's digest), and a folder keeps what walks
// and views learnt of its files in the store ([OpenFolderCached],
// [LoadFolderHashes]), so that the index package reads and hashes only the files that
// changed. The flow: a snapshot from here → index.Index.View (chunks, vectors, symbols)
// → assemble.Compose (the context of one completion point).
package snapshot
