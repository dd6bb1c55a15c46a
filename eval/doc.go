// Package eval scores contexts for fill-in-the-middle completion against the
// real middles of a dev set ({lang}-{stage}.truth.jsonl), without running a
// model, and runs reference configurations on the same data so that every
// number is read next to a baseline.
//
// # Metrics
//
// Each metric is a mean over datapoints of a per-datapoint value in [0, 1]:
//
//   - idrec ([IDRecall]): of the identifiers the middle introduces (ASCII
//     [A-Za-z_][A-Za-z0-9_]*, at least 2 bytes, not a keyword of the language,
//     absent from the prefix and suffix the model gets), the fraction found in
//     the context. Averaged over the datapoints that have such identifiers.
//     Its denominator depends on the prefix and suffix a configuration gives:
//     a configuration that trims the prefix is scored on more identifiers.
//   - novelrec ([NovelRecall]): of the middle's novel identifiers (the same
//     rule, absent from the datapoint's original prefix and suffix, as the
//     datapoint file holds them), the share found in the kept context.
//     Averaged over the datapoints that have novel identifiers: the same
//     datapoints and identifiers for every configuration, however it trims.
//   - allrec ([AllRecall]): of all the middle's identifiers (the same rule),
//     the share found anywhere in the prompt: the kept context, the prefix and
//     the suffix the prompt holds. Averaged over the datapoints whose middle
//     has identifiers (the same for every configuration). A configuration
//     that trims prefix lines the middle needs pays for it here.
//   - line_chrf ([LineChrF]): the best [ChrF] of one context line against the
//     middle's main (longest) line: what copying a single line could give.
//   - copy_chrf ([CopyChrF]): the ChrF of a simple, non-oracle copy completer
//     ([CopyPredict]) against the middle's first non-blank line.
//   - ctx_chars: the context's length in bytes, mean and 95th percentile
//     ([Percentile], nearest rank).
//
// [ChrF] is the competition's score: sacreBLEU's sentence chrF (Popović,
// "chrF: character n-gram F-score for automatic MT evaluation", WMT 2015)
// with character 1..6-grams, white space removed, β = 2 and precision and
// recall averaged over the effective orders.
//
// # Units
//
// ChrF and the token estimate count characters as Unicode code points (as
// Python does). Context sizes, byte budgets ([TrimToChars]) and MainLine's
// "longest" are in bytes of UTF-8, like assemble's budget. Tokens are
// characters/4 (repoctx.CharEstimate) unless a Hugging Face tokenizer.json is
// given (package tokens).
//
// # Settings
//
// Every metric is computed for the untrimmed context ("full"), for each model
// window W ("w8000", "w16000": [TrimToWindow], the competition scorer's rule:
// whole lines are kept from the end while 384 + tokens(prefix) +
// tokens(suffix) + tokens(kept lines) <= W) and for each byte budget
// ("c4000": [TrimToChars]). For allrec a window's prompt holds only what a
// prompt of that window can: when the given prefix and suffix alone exceed
// W − 384 tokens, whole lines of the far prefix are cut first, then of the far
// suffix ([TrimPromptToWindow]), so an untrimmed long prefix is not free. The
// full and byte-budget settings keep the prefix and suffix whole.
//
// # Configurations
//
// A prediction file ([ReadPredictions]; lines may override the prefix and
// suffix the model sees; "NAME=FILE" names its row, see [PredictionArg]) or a
// built-in configuration: [ConfigCurrent], what `repoctx predict` writes;
// [ConfigEmpty]; the competition starter kit's baselines [ConfigRecent] and
// [ConfigBM25File]; RepoCoder's sliding windows [ConfigWindows] (Zhang et al.,
// EMNLP 2023) and [ConfigWindowsOld], the same windows over every file of the
// language including the old completion file, less the old file's windows that
// the prefix or suffix already show (a window all of whose lines they hold):
// the rule windows has always followed, so the two rows agree; the seed's
// submitted method [ConfigSeed], whose rankers are pluggable ([SeedOptions],
// [Ranker]); with BM25 only it is reported as "seed-bm25"; and the ceiling
// [ConfigOracle]. Built-in baselines are deterministic: the recent baseline's
// random choice is seeded by the datapoint id.
//
// # Oracle and headroom
//
// The oracle row has no context. Its line_chrf is the best [ChrF] of any
// single line of the snapshot's files of the language or of the prefix and
// suffix given ([OracleLineChrF], the same ChrF line_chrf uses), its idrec the
// share of the middle's new identifiers found anywhere in those files
// ([OracleIDRecall]); its novelrec is that idrec (the oracle is given the
// datapoint's own prefix and suffix) and its allrec the share of all the
// middle's identifiers found in those files or the prefix and suffix. None
// depends on trimming: the row is the same in every setting. copy_chrf and ctx_chars do not apply (the copy completer needs a
// context; a "best line" copy is what line_chrf already bounds), so the tables
// print "-". A snapshot's distinct lines are read once; each datapoint's main
// line is matched against them with upper bounds of ChrF (from lengths,
// character classes, characters and bigrams): the most promising lines are
// scored first and every line whose bound is at most the best score so far is
// skipped, so only a few are scored in full and the result is exact. With both the bm25file and the oracle rows,
// [Headroom] gives each row's headroom captured, (row − bm25file) / (oracle −
// bm25file) for idrec and line_chrf, blank where oracle − bm25file <
// [MinHeadroom].
//
// # Paired comparisons
//
// With two rows or more, [PairedComparison] compares every row with a
// reference (Options.CompareTo; default current, else the first row),
// datapoint by datapoint: the mean difference per metric and setting with a
// 95% paired percentile bootstrap interval ([BootstrapMean]: 2000 resamples of
// the datapoints, a fixed seed; Efron & Tibshirani 1993) and a [Verdict]: a
// win is a positive mean, a loss a negative mean whose interval excludes 0,
// anything else a tie. Datapoints without a value on both sides (idrec without
// new identifiers) are left out of that pair; novelrec's and allrec's
// datapoints are the same on both sides.
//
// [Run] does it all and returns a [Report], printed by [Report.WriteTable] or
// [Report.WriteJSON]. Errors start with "eval: " and name the file, line or
// datapoint at fault.
package eval
