// Package dataset reads the JetBrains context-collection competition format
// (ASE 2025) and writes predictions safely. Datasets are built from git history by
// the dataset/fromgit package.
//
// # Layout
//
// A data folder holds, for each language and stage (for example "kotlin" and
// "dev", or "python" and "start"):
//
//	{lang}-{stage}.jsonl        one datapoint per line: id, repo ("owner/name"),
//	                            revision, path, modified[], prefix, suffix
//	{lang}-{stage}.zip          a zip holding one zip per repository snapshot,
//	                            named {owner}__{repo}-{revision}.zip, with the
//	                            repository's files at the inner zip's root
//	{lang}-{stage}.truth.jsonl  (dev data only) {"id", "middle", "commit", "kind"}
//
// Unpacked the official way, a snapshot lives in the folder
// repositories-{lang}-{stage}/{owner}__{repo}-{revision}/. The snapshot is
// the repository at the revision before the change: it holds the old version
// of the completion file (path), while prefix + middle + suffix is the file
// after the change.
//
// A prediction file has one JSON line per datapoint, in input order:
// {"context": "..."} and, optionally, "prefix" and "suffix" keys that replace
// the datapoint's own prefix and suffix.
//
// # What this package provides
//
//   - [ReadDatapoints] parses and validates a datapoint file line by line and
//     keeps one entry per non-blank line, so that callers can always write one
//     output line per input line even when some input lines are bad.
//   - [Datapoints] reads the same lazily, for batches that stream.
//   - [OpenSource] gives the snapshots of one {lang}-{stage} set (a
//     snapshot.Source), from the unpacked folder if present, otherwise from
//     the zip of zips, reading inner zips in memory without unpacking them to
//     disk; the snapshots themselves are package snapshot's, which refuses
//     hostile content (zip-slip names, duplicate entries, zip bombs, symlinks
//     leaving the snapshot, symlink loops, .git folders, oversize files).
//   - [Output] writes predictions atomically with a journal, so that an
//     interrupted run can be resumed and still produce byte-identical output.
//   - [ReadTruth] reads the dev sets' expected middles.
//
// Line numbers are 1-based. Every error
// this package returns starts with "dataset: " and names the file, line,
// snapshot or entry it is about.
package dataset
