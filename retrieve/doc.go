// Package retrieve is repoctx's retrieval: it ranks the chunks of one repository
// snapshot against a query, usually the code around the completion point, with one
// [Query] type ([Index.Search]): lexically (BM25), by dense embeddings, or by both fused
// (the default), as the seed's retriever did (BM25 weight 0.2, embeddings weight 0.8,
// weighted reciprocal rank fusion).
//
// The package is in memory only; the index package keeps what it computes (chunks,
// vectors, fitted LSA models) in the on-disk store (package store).
//
// # Analysis
//
// Text is tokenised by [Tokens]: identifiers are kept whole and also split on
// camelCase, snake_case and letter/digit boundaries, lower-cased; tokens longer than
// [MaxTokenBytes] bytes are dropped.
//
// # Corpus and views
//
// A [Corpus] holds the chunks of any number of revisions of one repository, each
// tokenised once when added ([Corpus.Add]). A snapshot's searchable [Index] is a view
// over it ([Corpus.NewIndex]): the snapshot's chunk ordinals, in order, with BM25
// statistics (document counts, field lengths, postings) of its own, so a view searches
// exactly as an index built from its chunks alone ([New]) would. Several snapshots of a
// repository thus share one tokenisation of their common chunks.
//
// # Scoring
//
// A BM25 search ranks chunks by Okapi BM25 (Robertson & Zaragoza, "The Probabilistic
// Relevance Framework: BM25 and Beyond", Foundations and Trends in Information Retrieval
// 3(4), 2009), summed over three fields — text, header, path — with per-field weights
// ([BoostText], [BoostHeader], [BoostPath]), k1 = [K1] = 1.2 and b = [B] = 0.75 (Lucene's
// and bleve's defaults), and the Lucene-style idf that stays positive. The query is an
// OR over its distinct tokens in all three fields, at most [MaxQueryTerms] of them (those
// of highest idf). Ties are broken by the chunks' order in the view.
//
// The top k are exact — the same as scoring every posting of the query terms — but
// MaxScore pruning (Turtle & Flood, "Query evaluation: strategies and optimizations",
// 1995) looks common terms up only for the chunks that can still make the top k.
//
// # Dense retrieval
//
// An [Embedder] maps texts to L2-normalised float32 vectors of a fixed dimension; a
// [DenseVectors] holds one per chunk of an index and the embedder for queries. Kinds
// ([DenseKind]):
//
//   - [DenseLSA] (the default, so hybrid retrieval works out of the box with nothing to
//     download): [LSA], latent semantic indexing (Deerwester et al., "Indexing by latent
//     semantic analysis", JASIS 41(6), 1990) — tf-idf over code sub-tokens reduced by a
//     truncated SVD computed with gonum — fitted on the snapshot's own chunks
//     ([LSAVectors], [DefaultLSADim] = 128 dimensions).
//   - [DenseModel]: any [Embedder] the caller opens ([ModelVectors]), such as a Hugging
//     Face sentence encoder (one .onnx file, tokenizer.json, config.json;
//     `repoctx model download` fetches all-MiniLM-L6-v2, the seed's model) opened by the
//     retrieve/hugot package, which is separate so that importing retrieve does not pull
//     in the ML stack.
//   - [DenseNone]: BM25 only.
//
// Chunks over a model's token limit (256 word pieces for all-MiniLM-L6-v2, [CLS] and
// [SEP] included) are truncated explicitly, never silently: [DenseInfo] counts and lists
// them. Queries say which end to keep ([KeepTail] for text ending at the completion
// point, [KeepHead] for text starting there). [EmbedTexts] embeds in batches, longest
// texts first so a batch pads little.
//
// Dense search ([Dense] mode) is exact: a brute-force dot product over the contiguous
// matrix of the view's vectors (about 1 ms for 13,000 chunks of dimension 128).
//
// # Fusion
//
// A [Hybrid] search fuses the two rankings by weighted reciprocal rank fusion
// (Cormack, Clarke & Büttcher, "Reciprocal rank fusion outperforms Condorcet and
// individual rank learning methods", SIGIR 2009): score = Σ w_r / ([RRFK] + rank_r),
// over at least the top [DefaultFusionDepth] hits of each ranking, with the seed's weights (dense 0.8,
// BM25 0.2) by default ([DefaultWeights]). Each [FusedHit] carries its fused rank and
// score and both retrievers' ranks and scores, so a caller can show why a chunk was
// chosen.
package retrieve
