// Package hugot runs Hugging Face sentence encoders (ONNX) as dense retrieval models
// for the retrieve package: hugot's pure-Go backend by default, ONNX Runtime with
// `-tags onnxruntime`. It is its own package so that importing retrieve does not pull
// in the machine-learning stack (gomlx, hugot, onnxruntime_go).
//
// # Backends and the fast path
//
// The default build uses hugot's pure-Go backend (no cgo, no shared library): `go build`
// and CI need nothing else, but it is slow (1-2 texts/s for a MiniLM-size model at 128
// tokens on 2 cores; ONNX Runtime runs 12-25× faster, see the benchmarks in
// bench_test.go). hugot's own "ORT" build tag would also link a Rust tokenizer
// library that no reachable registry serves, so the fast path bypasses hugot: build with
//
//	go build -tags onnxruntime ./cmd/repoctx
//
// and pass [Options.Backend] "ort" (e.g. `repoctx model info --backend ort DIR`). This calls ONNX
// Runtime directly through github.com/yalue/onnxruntime_go (which needs cgo and ONNX
// Runtime's C API version 23, i.e. ONNX Runtime 1.23), keeping the pure-Go tokenizer,
// text preparation and pooling, so both backends give the same vectors (to 1e-5) and
// share model IDs, indexes and the embedding cache. ONNX Runtime itself is loaded at run
// time from [Options.ORTLibrary], $REPOCTX_ORT_LIB or libonnxruntime.so; the npm
// package onnxruntime-node ships it:
//
//	npm pack onnxruntime-node@1.23.2 && tar xzf onnxruntime-node-1.23.2.tgz
//	export REPOCTX_ORT_LIB=$PWD/package/bin/napi-v6/linux/x64/libonnxruntime.so.1
//	go test -tags onnxruntime ./retrieve/hugot   # runs the ONNX Runtime tests too
package hugot

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/repoctx/repoctx/retrieve"

	gomlxbackends "github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	khugot "github.com/knights-analytics/hugot"
	hugotopts "github.com/knights-analytics/hugot/options"
	"github.com/knights-analytics/hugot/pipelines"
	"github.com/sugarme/tokenizer"
	"golang.org/x/text/unicode/norm"
)

// DefaultModel is the Hugging Face model `repoctx model download` fetches by default:
// the seed's sentence encoder.
const DefaultModel = "sentence-transformers/all-MiniLM-L6-v2"

// DefaultMaxTokens caps the input limit, in word pieces with the special tokens, of a
// model folder whose sentence_bert_config.json states none (see [Options.MaxTokens]):
// such a model is given at most this many even when it has more positions.
const DefaultMaxTokens = 512

// ErrNoLimit is wrapped by the error of [New] and [ModelID] for a model folder whose
// token limit cannot be told: no max_seq_length in sentence_bert_config.json, no
// position-embedding table in the ONNX graph and no max_position_embeddings in
// config.json. Set [Options.MaxTokens] for such a model.
var ErrNoLimit = errors.New("hugot: the model's token limit is unknown")

// Options configures [New].
type Options struct {
	// Backend runs the model: "go" (default) is hugot's pure-Go backend (no cgo, about
	// 1-2 texts/s for a MiniLM-size model at 128 tokens on 2 cores); "ort" calls ONNX
	// Runtime through github.com/yalue/onnxruntime_go and needs a binary built with
	// `-tags onnxruntime` (see doc.go). Both give the same vectors (to float rounding)
	// and so share the model ID, indexes and the embedding cache.
	Backend string
	// MaxTokens is the model's input limit in word pieces, [CLS] and [SEP] included;
	// longer queries are truncated explicitly and reported, longer chunks are embedded
	// in pieces (see [retrieve.Splitter]). 0 means: max_seq_length of
	// sentence_bert_config.json if the folder has one (256 for all-MiniLM-L6-v2), else
	// the model's positions capped at [DefaultMaxTokens]. The positions are the rows of
	// the ONNX graph's position-embedding table, else max_position_embeddings of
	// config.json (minus pad_token_id+1 for RoBERTa-style models, whose position ids
	// start after the padding index); the limit is never above them. Without
	// MaxTokens, max_seq_length or positions, [New] fails with [ErrNoLimit].
	MaxTokens int
	// OnnxFile names the .onnx file (its path relative to the folder, or its base name)
	// when the folder has several.
	OnnxFile string
	// BatchSize is the largest number of texts run through the model at once (default
	// 32); larger Embed calls are split.
	BatchSize int
	// ORTLibrary is the path of ONNX Runtime's shared library for the "ort" backend;
	// default $REPOCTX_ORT_LIB, else "libonnxruntime.so" (found by the dynamic loader).
	ORTLibrary string
	// Threads is ONNX Runtime's intra-op thread count for "ort"; 0 means its default.
	Threads int
}

// registerSequentialGo registers, once and only when a model is first opened with the
// pure-Go backend, a variant of gomlx's pure-Go backend (simplego) that runs a graph's
// ops one after the other: gomlx v0.26.0's simplego, which hugot's Go session uses,
// races when it runs a graph's independent ops in parallel (an op writes a buffer
// another op still reads; the race detector shows it with batches of a few texts).
// Matrix products still use all cores. It replaces gomlx's registration of simplego
// process-wide, which is why it waits for the caller to ask for a model.
var registerSequentialGo = sync.OnceFunc(func() {
	gomlxbackends.Register(simplego.BackendName, func(config string) (gomlxbackends.Backend, error) {
		return simplego.New(strings.TrimPrefix(config+",ops_sequential", ","))
	})
})

// modelFiles are the files of a model folder that determine its vectors.
type modelFiles struct {
	dir       string
	onnx      string // absolute path of the .onnx file
	tokenizer string // tokenizer.json
	maxTokens int    // resolved input limit
	maxPos    int    // max_position_embeddings, 0 if unknown
}

// resolveModel finds a model folder's files and its input limit.
func resolveModel(dir string, opts Options) (modelFiles, error) {
	mf := modelFiles{dir: dir}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		if err == nil {
			err = errors.New("not a directory")
		}
		return mf, fmt.Errorf("hugot: model folder %s: %w", dir, err)
	}
	var onnxFiles []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".onnx") {
			onnxFiles = append(onnxFiles, p)
		}
		return nil
	})
	if err != nil {
		return mf, fmt.Errorf("hugot: model folder %s: %w", dir, err)
	}
	switch {
	case opts.OnnxFile != "":
		for _, p := range onnxFiles {
			rel, _ := filepath.Rel(dir, p)
			if rel == filepath.Clean(opts.OnnxFile) || filepath.Base(p) == opts.OnnxFile {
				mf.onnx = p
			}
		}
		if mf.onnx == "" {
			return mf, fmt.Errorf("hugot: model folder %s has no %s", dir, opts.OnnxFile)
		}
	case len(onnxFiles) == 1:
		mf.onnx = onnxFiles[0]
	case len(onnxFiles) == 0:
		return mf, fmt.Errorf("hugot: model folder %s has no .onnx file", dir)
	default:
		return mf, fmt.Errorf("hugot: model folder %s has %d .onnx files; keep one in the folder (repoctx model download --onnx PATH fetches only that one) or, in the library, name it in Options.OnnxFile", dir, len(onnxFiles))
	}
	mf.tokenizer = filepath.Join(dir, "tokenizer.json")
	if _, err := os.Stat(mf.tokenizer); err != nil {
		return mf, fmt.Errorf("hugot: model folder %s has no tokenizer.json: %w", dir, err)
	}
	var cfg struct {
		MaxPos    int    `json:"max_position_embeddings"`
		ModelType string `json:"model_type"`
		PadID     *int   `json:"pad_token_id"`
	}
	if err := readJSON(filepath.Join(dir, "config.json"), &cfg); err != nil {
		return mf, err
	}
	var st struct {
		MaxSeq int `json:"max_seq_length"`
	}
	if err := readJSON(filepath.Join(dir, "sentence_bert_config.json"), &st); err != nil {
		return mf, err
	}
	rows, err := positionRows(mf.onnx)
	if err != nil {
		return mf, fmt.Errorf("hugot: %w", err)
	}
	mf.maxPos = cmp.Or(rows, cfg.MaxPos)
	if t := strings.ToLower(cfg.ModelType); mf.maxPos > 0 && (strings.Contains(t, "roberta") || t == "camembert") {
		pad := 1
		if cfg.PadID != nil && *cfg.PadID >= 0 {
			pad = *cfg.PadID
		}
		mf.maxPos -= pad + 1
	}
	switch {
	case opts.MaxTokens > 0:
		mf.maxTokens = opts.MaxTokens
	case st.MaxSeq > 0:
		mf.maxTokens = st.MaxSeq
	case mf.maxPos > 0:
		mf.maxTokens = min(mf.maxPos, DefaultMaxTokens)
	default:
		return mf, fmt.Errorf("%w: model folder %s has no max_seq_length in sentence_bert_config.json, no position-embedding table in %s and no max_position_embeddings in config.json (set the limit explicitly)",
			ErrNoLimit, dir, filepath.Base(mf.onnx))
	}
	if mf.maxPos > 0 {
		mf.maxTokens = min(mf.maxTokens, mf.maxPos)
	}
	return mf, nil
}

// readJSON decodes the JSON file path into v; a missing file leaves v as it is. A
// file that cannot be read or decoded is an error naming it.
func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("hugot: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("hugot: %s: malformed JSON: %w", path, err)
	}
	return nil
}

// hugotVersion changes when the way texts are prepared, split or pooled changes
// (2: long chunks are split, see [retrieve.Splitter]).
const hugotVersion = 2

// fileHashes memoises file hashes by path, size and modification time.
var fileHashes sync.Map // string -> hashMemo

type hashMemo struct {
	size int64
	mod  time.Time
	sum  [32]byte
}

func hashFile(path string) ([32]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return [32]byte{}, err
	}
	if m, ok := fileHashes.Load(path); ok {
		if m := m.(hashMemo); m.size == st.Size() && m.mod.Equal(st.ModTime()) {
			return m.sum, nil
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return [32]byte{}, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return [32]byte{}, err
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	fileHashes.Store(path, hashMemo{st.Size(), st.ModTime(), sum})
	return sum, nil
}

// ModelID returns the [retrieve.Embedder.ID] that [New] gives the model folder dir with
// opts, without loading the model: "hugot:{folder name}:{hash}:max{limit}:v1", where
// the hash covers the .onnx file, tokenizer.json, config.json and
// sentence_bert_config.json, and limit is the resolved [Options.MaxTokens]. The
// backend is not part of it. File hashes are memoised per process by path, size and
// modification time.
func ModelID(dir string, opts Options) (string, error) {
	mf, err := resolveModel(dir, opts)
	if err != nil {
		return "", err
	}
	return mf.id()
}

func (mf modelFiles) id() (string, error) {
	h := sha256.New()
	for _, p := range []string{mf.onnx, mf.tokenizer, filepath.Join(mf.dir, "config.json"), filepath.Join(mf.dir, "sentence_bert_config.json")} {
		sum, err := hashFile(p)
		if errors.Is(err, fs.ErrNotExist) && p != mf.onnx && p != mf.tokenizer {
			fmt.Fprintf(h, "%s:absent\n", filepath.Base(p))
			continue
		}
		if err != nil {
			return "", fmt.Errorf("hugot: hash model file: %w", err)
		}
		fmt.Fprintf(h, "%s:%x\n", filepath.Base(p), sum)
	}
	name := filepath.Base(filepath.Clean(mf.dir))
	return fmt.Sprintf("hugot:%s:%s:max%d:v%d", name, hex.EncodeToString(h.Sum(nil))[:16], mf.maxTokens, hugotVersion), nil
}

// New opens a Hugging Face sentence-encoder folder as an [retrieve.Embedder]: one .onnx
// file (a BERT-style encoder whose first output is the token embeddings, e.g.
// last_hidden_state), tokenizer.json and optionally config.json and
// sentence_bert_config.json, as `repoctx model download` fetches them. The backend is
// hugot's FeatureExtraction pipeline on its pure-Go backend (github.com/knights-analytics/hugot,
// [khugot.NewGoSession]), or ONNX Runtime (see [Options.Backend]).
//
// A text's vector is the mean of its token embeddings over the attention mask,
// L2-normalised (sentence-transformers' mean pooling). Texts are prepared before
// tokenisation: when tokenizer.json's normaliser strips accents (BertNormalizer with
// strip_accents true, or null with lowercase true, as in all-MiniLM-L6-v2; or a
// StripAccents normaliser), the text is put in Unicode NFD and combining marks (Mn) are
// dropped, as Hugging Face's tokenizer does and the pure-Go tokenizer does not.
// tokenizer.json's own truncation and padding are switched off; instead a text of more
// than [Options.MaxTokens] word pieces ([CLS]/[SEP] included) is cut explicitly and
// reported truncated by Embed: [retrieve.KeepHead] keeps its first pieces (as Hugging Face
// truncates), [retrieve.KeepTail] drops whole words from its start until the rest fits.
func New(modelDir string, opts Options) (retrieve.Embedder, error) {
	mf, err := resolveModel(modelDir, opts)
	if err != nil {
		return nil, err
	}
	id, err := mf.id()
	if err != nil {
		return nil, err
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 32
	}
	switch opts.Backend {
	case "", "go":
		return newHugotGo(mf, id, opts)
	case "ort":
		return newHugotORT(mf, id, opts)
	}
	return nil, fmt.Errorf("hugot: unknown model backend %q (want go or ort)", opts.Backend)
}

// textPrep prepares texts for a WordPiece-style tokenizer and enforces the token limit.
type textPrep struct {
	tk      *tokenizer.Tokenizer
	strip   bool // strip accents before tokenising
	limit   int  // tokens, special ones included
	special int  // special tokens the post-processor adds to a single text
}

// newTextPrep configures tk (switching its truncation and padding off) for limit tokens.
func newTextPrep(tk *tokenizer.Tokenizer, tokenizerJSON []byte, limit int) (*textPrep, error) {
	tk.WithTruncation(nil)
	tk.WithPadding(nil)
	p := &textPrep{tk: tk, strip: wantsAccentStrip(tokenizerJSON), limit: limit}
	enc, err := tk.EncodeSingle("", true)
	if err != nil {
		return nil, fmt.Errorf("hugot: tokenizer: %w", err)
	}
	p.special = len(enc.Ids)
	if limit <= p.special {
		return nil, fmt.Errorf("hugot: token limit %d leaves no room beside %d special tokens", limit, p.special)
	}
	return p, nil
}

// wantsAccentStrip reports whether a tokenizer.json's normaliser strips accents the
// way Hugging Face's tokenizers library does.
func wantsAccentStrip(tokenizerJSON []byte) bool {
	var t struct {
		Normalizer json.RawMessage `json:"normalizer"`
	}
	if json.Unmarshal(tokenizerJSON, &t) != nil {
		return false
	}
	var walk func(raw json.RawMessage) bool
	walk = func(raw json.RawMessage) bool {
		var n struct {
			Type         string            `json:"type"`
			StripAccents *bool             `json:"strip_accents"`
			Lowercase    bool              `json:"lowercase"`
			Normalizers  []json.RawMessage `json:"normalizers"`
		}
		if json.Unmarshal(raw, &n) != nil {
			return false
		}
		switch n.Type {
		case "BertNormalizer":
			if n.StripAccents != nil {
				return *n.StripAccents
			}
			return n.Lowercase
		case "StripAccents":
			return true
		case "Sequence":
			return slices.ContainsFunc(n.Normalizers, walk)
		}
		return false
	}
	return len(t.Normalizer) > 0 && walk(t.Normalizer)
}

// stripAccents returns s in Unicode NFD without non-spacing marks (category Mn).
func stripAccents(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	d := norm.NFD.String(s)
	var b strings.Builder
	b.Grow(len(d))
	for _, r := range d {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// prepare normalises text and cuts it to the token limit, keeping the given end. It
// returns the text to give the model, its encoding (special tokens included) and
// whether it was cut.
func (p *textPrep) prepare(text string, keep retrieve.KeepEnd) (string, *tokenizer.Encoding, bool, error) {
	if p.strip {
		text = stripAccents(text)
	}
	enc, err := p.tk.EncodeSingle(text, true)
	if err != nil {
		return "", nil, false, fmt.Errorf("hugot: tokenize: %w", err)
	}
	budget := p.limit - p.special
	content := contentTokens(enc)
	if len(content) <= budget {
		return text, enc, false, nil
	}
	want := budget
	for range 16 {
		cut := cutText(text, enc, content, want, keep)
		cenc, err := p.tk.EncodeSingle(cut, true)
		if err != nil {
			return "", nil, false, fmt.Errorf("hugot: tokenize: %w", err)
		}
		n := len(contentTokens(cenc))
		if n <= budget {
			return cut, cenc, true, nil
		}
		want -= n - budget // rare: the cut text tokenises into more pieces
		if want <= 0 {
			break
		}
	}
	return "", nil, false, fmt.Errorf("hugot: cannot cut a text of %d tokens to %d", len(content), budget)
}

// split cuts text (accents stripped when the tokenizer strips them) into consecutive
// pieces of at most limit-special content tokens each, cut at the start of a word
// when one lies in the second half of a piece's room, else inside the word (see
// [retrieve.Splitter]).
func (p *textPrep) split(text string) ([]string, error) {
	if p.strip {
		text = stripAccents(text)
	}
	enc, err := p.tk.EncodeSingle(text, true)
	if err != nil {
		return nil, fmt.Errorf("hugot: tokenize: %w", err)
	}
	budget := p.limit - p.special
	content := contentTokens(enc)
	if len(content) <= budget {
		return []string{text}, nil
	}
	startOf := func(pos int) int {
		o := enc.Offsets[content[pos]]
		return min(max(o[0], 0), len(text))
	}
	continues := func(pos int) bool { // whether content token pos continues the word of pos-1
		a, b := content[pos-1], content[pos]
		if len(enc.Words) > b && enc.Words[b] >= 0 {
			return enc.Words[a] == enc.Words[b]
		}
		return strings.HasPrefix(enc.Tokens[b], "##")
	}
	var pieces []string
	from := 0 // byte offset of the current piece
	for start := 0; start < len(content); {
		end := min(start+budget, len(content))
		if end < len(content) {
			for e := end; e > start+budget/2; e-- {
				if !continues(e) {
					end = e
					break
				}
			}
		}
		to := len(text)
		if end < len(content) {
			to = startOf(end)
		}
		if to > from {
			pieces = append(pieces, text[from:to])
		}
		from, start = to, end
	}
	return pieces, nil
}

// contentTokens returns the positions of enc's non-special tokens.
func contentTokens(enc *tokenizer.Encoding) []int {
	out := make([]int, 0, len(enc.Ids))
	for i := range enc.Ids {
		if i < len(enc.SpecialTokenMask) && enc.SpecialTokenMask[i] != 0 {
			continue
		}
		out = append(out, i)
	}
	return out
}

// cutText returns the part of text holding n of its content tokens: the first n for
// retrieve.KeepHead (cut at the start of token n), or for retrieve.KeepTail the last whole words that fit
// in n tokens (a word too long to fit alone is cut inside).
func cutText(text string, enc *tokenizer.Encoding, content []int, n int, keep retrieve.KeepEnd) string {
	start := func(pos int) int {
		o := enc.Offsets[content[pos]]
		return min(max(o[0], 0), len(text))
	}
	if keep == retrieve.KeepHead {
		return text[:start(n)]
	}
	continues := func(pos int) bool { // whether content token pos continues the word of pos-1
		a, b := content[pos-1], content[pos]
		if len(enc.Words) > b && enc.Words[b] >= 0 {
			return enc.Words[a] == enc.Words[b]
		}
		return strings.HasPrefix(enc.Tokens[b], "##")
	}
	j := len(content) - n
	for j < len(content) && continues(j) {
		j++
	}
	if j == len(content) {
		j = len(content) - n
	}
	return text[start(j):]
}

// hugotGo is the pure-Go backend: hugot's FeatureExtraction pipeline.
type hugotGo struct {
	mu      sync.Mutex
	id      string
	dim     int
	batch   int
	prep    *textPrep
	session *khugot.Session
	pipe    *pipelines.FeatureExtractionPipeline
}

// Sequence-length and batch buckets for the pure-Go backend: inputs are padded up to the
// next bucket, so the number of compiled graphs (one per shape) stays bounded.
var (
	goSeqBuckets   = []int{16, 32, 48, 64, 96, 128, 192, 256, 384, 512}
	goBatchBuckets = []int{1, 4, 8, 16, 32}
)

func newHugotGo(mf modelFiles, id string, opts Options) (_ retrieve.Embedder, err error) {
	registerSequentialGo()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("hugot: load model %s: %v", mf.dir, r)
		}
	}()
	var seq []int
	for _, b := range goSeqBuckets {
		if b < mf.maxTokens {
			seq = append(seq, b)
		}
	}
	seq = append(seq, mf.maxTokens)
	var bat []int
	for _, b := range goBatchBuckets {
		if b < opts.BatchSize {
			bat = append(bat, b)
		}
	}
	bat = append(bat, opts.BatchSize)
	session, err := khugot.NewGoSession(hugotopts.WithGoMLXBatchBuckets(bat), hugotopts.WithGoMLXSequenceBuckets(seq))
	if err != nil {
		return nil, fmt.Errorf("hugot: hugot session: %w", err)
	}
	rel, _ := filepath.Rel(mf.dir, mf.onnx)
	cfg := khugot.FeatureExtractionConfig{
		ModelPath:    mf.dir,
		Name:         "repoctx-embed",
		OnnxFilename: filepath.Base(rel),
		Options:      []khugot.FeatureExtractionOption{pipelines.WithNormalization()},
	}
	pipe, err := khugot.NewPipeline(session, cfg)
	if err != nil {
		_ = session.Destroy()
		return nil, fmt.Errorf("hugot: load model %s: %w", mf.dir, err)
	}
	h := &hugotGo{id: id, batch: opts.BatchSize, session: session, pipe: pipe}
	fail := func(err error) (retrieve.Embedder, error) {
		_ = session.Destroy()
		return nil, err
	}
	tok := pipe.Model.Tokenizer
	if tok == nil || tok.GoTokenizer == nil {
		return fail(fmt.Errorf("hugot: model %s: no Go tokenizer", mf.dir))
	}
	raw, err := os.ReadFile(mf.tokenizer)
	if err != nil {
		return fail(fmt.Errorf("hugot: %w", err))
	}
	if h.prep, err = newTextPrep(tok.GoTokenizer.Tokenizer, raw, mf.maxTokens); err != nil {
		return fail(err)
	}
	// Learn the dimension by embedding a text (the output's last dimension may be
	// symbolic in the ONNX file).
	probe, err := h.run([]string{"a"})
	if err != nil {
		return fail(err)
	}
	h.dim = len(probe[0])
	if h.dim == 0 {
		return fail(fmt.Errorf("hugot: model %s produces empty vectors", mf.dir))
	}
	return h, nil
}

func (h *hugotGo) ID() string { return h.id }
func (h *hugotGo) Dim() int   { return h.dim }

// Close releases the hugot session.
func (h *hugotGo) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.session == nil {
		return nil
	}
	err := h.session.Destroy()
	h.session, h.pipe = nil, nil
	return err
}

// run embeds prepared texts (at most one batch) with hugot, turning panics into errors.
func (h *hugotGo) run(texts []string) (out [][]float32, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("hugot: model %s failed: %v", h.id, r)
		}
	}()
	res, err := h.pipe.RunPipeline(texts)
	if err != nil {
		return nil, fmt.Errorf("hugot: model %s: %w", h.id, err)
	}
	if len(res.Embeddings) != len(texts) {
		return nil, fmt.Errorf("hugot: model %s returned %d vectors for %d texts", h.id, len(res.Embeddings), len(texts))
	}
	return res.Embeddings, nil
}

// Embed implements [retrieve.Embedder] (see [New]).
func (h *hugotGo) Embed(texts []string, keep retrieve.KeepEnd) ([][]float32, []bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.session == nil {
		return nil, nil, fmt.Errorf("hugot: model %s is closed", h.id)
	}
	prepared := make([]string, len(texts))
	truncated := make([]bool, len(texts))
	for i, t := range texts {
		p, _, cut, err := h.prep.prepare(t, keep)
		if err != nil {
			return nil, nil, err
		}
		prepared[i], truncated[i] = p, cut
	}
	vecs := make([][]float32, 0, len(texts))
	for lo := 0; lo < len(prepared); lo += h.batch {
		out, err := h.run(prepared[lo:min(lo+h.batch, len(prepared))])
		if err != nil {
			return nil, nil, err
		}
		for _, v := range out {
			if len(v) != h.dim {
				return nil, nil, fmt.Errorf("hugot: model %s returned a vector of dimension %d, want %d", h.id, len(v), h.dim)
			}
			v = slices.Clone(v)
			retrieve.Normalize(v)
			vecs = append(vecs, v)
		}
	}
	return vecs, truncated, nil
}

// Split implements [retrieve.Splitter]: pieces of at most the token limit, cut at
// word starts where it can.
func (h *hugotGo) Split(text string) ([]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.prep.split(text)
}

// limit returns the model's input limit in tokens (for benchmarks).
func (h *hugotGo) limit() int { return h.prep.limit }
