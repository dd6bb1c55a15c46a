// Package retrieve is the lexical (BM25) side of repoctx's retrieval: it indexes the
// chunks of one repository snapshot on disk with bleve and ranks them against a query,
// usually the code around the completion point.
//
// # Analysis
//
// Text is tokenised by the code-aware analyzer registered in bleve as [AnalyzerName]:
// identifiers are indexed whole and split on camelCase, snake_case and letter/digit
// boundaries (see [Tokens]).
//
// # Index layout
//
// [Build] writes, into one directory:
//
//	manifest.json   format version, key, chunk count, build time, field statistics
//	chunks.gob.sz   the chunks in Build order, gob-encoded, snappy-compressed
//	bleve/          a bleve (scorch) index of the fields text, header and path
//
// It builds in a temporary sibling directory, fsyncs it and renames it into place, so a
// reader sees either no index or a complete one. [OpenOrBuild] keeps one such directory
// per key under a cache directory.
//
// # Scoring
//
// [Index.Search] ranks chunks by Okapi BM25 (Robertson & Zaragoza, "The Probabilistic
// Relevance Framework: BM25 and Beyond", Foundations and Trends in Information Retrieval
// 3(4), 2009), summed over the three fields with per-field weights ([BoostText],
// [BoostHeader], [BoostPath]), with k1 = [K1] = 1.2 and b = [B] = 0.75 — the values bleve
// uses too. The query is an OR over its distinct tokens in all three fields.
//
// The score is computed by this package from bleve's postings (term frequencies and field
// lengths), not by bleve's own query scorer, because bleve's "bm25" scoring model (v2.6.3)
// departs from BM25 in ways that change rankings: it uses √tf for tf; its query
// normalisation multiplies every term's score by boost·idf/√(Σ (boost·idf)²), so idf
// counts twice; a disjunction multiplies by the fraction of clauses matched (Lucene's old
// "coord"); and the "average field length" it divides by is the number of distinct terms
// in the field's dictionary per document, rounded up, not the mean number of tokens. The
// index mapping still selects bleve's "bm25" model, so plain bleve queries against the
// index (handy for debugging) use bleve's variant.
//
// The top k are exact — the same as scoring every posting of the query terms — but
// MaxScore pruning (Turtle & Flood 1995) looks common terms up only for the chunks that
// can still make the top k.
package retrieve
