// Package retrieve is repoctx's retrieval: it indexes the chunks of one repository
// snapshot on disk and ranks them against a query, usually the code around the
// completion point with one [Query] type ([Index.Search]): lexically (BM25 over bleve's
// postings), by dense embeddings, or by both fused (the default), as the seed's retriever
// did (BM25 weight 0.2, all-MiniLM-L6-v2 embeddings weight 0.8, weighted reciprocal rank
// fusion).
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
//	manifest.json   format version, key, chunk count, build time, field statistics,
//	                dense model ID and counts ([DenseInfo])
//	chunks.gob.sz   the chunks in Build order, gob-encoded, snappy-compressed
//	bleve/          a bleve (scorch) index of the fields text, header and path
//	vectors.f32     one L2-normalised float32 vector per chunk, in Build order
//	lsa.gob.sz      the fitted LSA model (built-in dense model only)
//
// It builds in a temporary sibling directory, fsyncs it and renames it into place, so a
// reader sees either no index or a complete one. [OpenOrBuild] keeps one such directory
// per key under a cache directory.
//
// # Scoring
//
// A BM25 search ranks chunks by Okapi BM25 (Robertson & Zaragoza, "The Probabilistic
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
//
// # Dense retrieval
//
// An [Embedder] maps texts to L2-normalised float32 vectors of a fixed dimension.
// [BuildOptions.Dense] selects it when the index is built:
//
//   - "lsa" (the default, so hybrid retrieval works out of the box with nothing to
//     download): [LSA], latent semantic indexing (Deerwester et al. 1990) — tf-idf over
//     code sub-tokens reduced by a truncated SVD computed with gonum — fitted on the
//     snapshot's own chunks at index time and stored in the index ([DefaultLSADim] = 128
//     dimensions, [BuildOptions.Dim]).
//   - any [Embedder] the caller opens ([DenseModel]), such as a Hugging Face model
//     folder (one .onnx file, tokenizer.json, config.json; `repoctx model download`
//     fetches all-MiniLM-L6-v2, the seed's model) opened by the retrieve/hugot package:
//     a transformer sentence encoder run by hugot, mean-pooled and normalised. It is a
//     separate package so that importing retrieve does not pull in the ML stack.
//   - "none" ([DenseNone]): BM25 only.
//
// The model's ID is part of the index's directory name and manifest, so changing it
// builds a new index. Chunks over the model's token limit (256 word pieces for
// all-MiniLM-L6-v2, [CLS] and [SEP] included) are truncated explicitly, never silently:
// [DenseInfo] counts and lists them. Queries say which end to keep ([KeepTail] for text
// ending at the hole, [KeepHead] for text starting there).
//
// Dense search ([Dense] mode of [Index.Search]) is exact: a brute-force dot product over the contiguous matrix of
// the snapshot's vectors (about 1 ms for 13,000 chunks of dimension 128). bleve's own
// kNN needs a faiss build that is not available here.
//
// # Embedding cache
//
// Transformer embeddings are cached on disk by (model ID, SHA-256 of the chunk text) in
// a bbolt file ([EmbedCacheFile], by default in the "embeddings" folder of the index
// cache directory), so the index of a second snapshot of a repository embeds only the
// chunks that changed, and rebuilding an index embeds nothing. Builds embed in batches
// ([BuildOptions.BatchSize], longest chunks first so a batch pads little) and write each
// batch's vectors to disk at once, so memory stays bounded. The LSA model is not cached
// that way: it is fitted once per snapshot key and kept, with its vectors, in the index
// directory.
//
// # Fusion
//
// A [Hybrid] search fuses the two rankings by weighted reciprocal rank fusion
// (Cormack, Clarke & Büttcher, SIGIR 2009): score = Σ w_r / (60 + rank_r), with the
// seed's weights (dense 0.8, BM25 0.2) by default ([Weights]). Each [FusedHit] carries
// its fused rank and score and both retrievers' ranks and scores, so a caller can show
// why a chunk was chosen.
package retrieve
