//go:build onnxruntime

package hugot

import (
	"fmt"
	"os"
	"sync"

	"github.com/repoctx/repoctx/retrieve"

	"github.com/sugarme/tokenizer/pretrained"
	ort "github.com/yalue/onnxruntime_go"
)

// ORTAvailable reports whether this binary can run models with ONNX Runtime
// ([Options.Backend] "ort"): only when built with `-tags onnxruntime`.
const ORTAvailable = true

// ortEnv guards the process-wide ONNX Runtime environment, initialised once and kept
// for the life of the process.
var ortEnv struct {
	sync.Mutex
	lib string
}

func initORT(lib string) error {
	ortEnv.Lock()
	defer ortEnv.Unlock()
	if ort.IsInitialized() {
		if lib != ortEnv.lib {
			return fmt.Errorf("hugot: ONNX Runtime already loaded from %s, not %s", ortEnv.lib, lib)
		}
		return nil
	}
	ort.SetSharedLibraryPath(lib)
	if err := ort.InitializeEnvironment(); err != nil {
		return fmt.Errorf("hugot: load ONNX Runtime from %s: %w", lib, err)
	}
	ortEnv.lib = lib
	return nil
}

// hugotORT runs a model folder with ONNX Runtime directly (github.com/yalue/onnxruntime_go),
// with the same pure-Go tokenizer, text preparation and pooling as the hugot backend.
type hugotORT struct {
	mu      sync.Mutex
	id      string
	dim     int
	batch   int
	prep    *textPrep
	session *ort.DynamicAdvancedSession
	inputs  []string // input names, in the session's order
}

func newHugotORT(mf modelFiles, id string, opts Options) (retrieve.Embedder, error) {
	lib := opts.ORTLibrary
	if lib == "" {
		lib = os.Getenv("REPOCTX_ORT_LIB")
	}
	if lib == "" {
		lib = "libonnxruntime.so"
	}
	if err := initORT(lib); err != nil {
		return nil, err
	}
	ins, outs, err := ort.GetInputOutputInfo(mf.onnx)
	if err != nil {
		return nil, fmt.Errorf("hugot: read model %s: %w", mf.onnx, err)
	}
	if len(outs) == 0 {
		return nil, fmt.Errorf("hugot: model %s has no outputs", mf.onnx)
	}
	out := outs[0] // as hugot: the first output holds the token embeddings
	if len(out.Dimensions) != 3 || out.Dimensions[2] <= 0 {
		return nil, fmt.Errorf("hugot: model %s output %s has shape %v, want [batch, sequence, hidden]", mf.onnx, out.Name, out.Dimensions)
	}
	h := &hugotORT{id: id, dim: int(out.Dimensions[2]), batch: opts.BatchSize}
	for _, in := range ins {
		switch in.Name {
		case "input_ids", "attention_mask", "token_type_ids":
			h.inputs = append(h.inputs, in.Name)
		default:
			return nil, fmt.Errorf("hugot: model %s has an unsupported input %q", mf.onnx, in.Name)
		}
	}
	so, err := ort.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("hugot: ONNX Runtime: %w", err)
	}
	defer so.Destroy()
	if opts.Threads > 0 {
		if err := so.SetIntraOpNumThreads(opts.Threads); err != nil {
			return nil, fmt.Errorf("hugot: ONNX Runtime: %w", err)
		}
	}
	if h.session, err = ort.NewDynamicAdvancedSession(mf.onnx, h.inputs, []string{out.Name}, so); err != nil {
		return nil, fmt.Errorf("hugot: load model %s: %w", mf.onnx, err)
	}
	raw, err := os.ReadFile(mf.tokenizer)
	if err != nil {
		h.session.Destroy()
		return nil, fmt.Errorf("hugot: %w", err)
	}
	tk, err := pretrained.FromFile(mf.tokenizer)
	if err != nil {
		h.session.Destroy()
		return nil, fmt.Errorf("hugot: load %s: %w", mf.tokenizer, err)
	}
	if h.prep, err = newTextPrep(tk, raw, mf.maxTokens); err != nil {
		h.session.Destroy()
		return nil, err
	}
	return h, nil
}

func (h *hugotORT) ID() string { return h.id }
func (h *hugotORT) Dim() int   { return h.dim }

// Close releases the ONNX Runtime session (the environment stays loaded).
func (h *hugotORT) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.session == nil {
		return nil
	}
	err := h.session.Destroy()
	h.session = nil
	return err
}

// Embed implements [retrieve.Embedder] (see [New]).
func (h *hugotORT) Embed(texts []string, keep retrieve.KeepEnd) ([][]float32, []bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.session == nil {
		return nil, nil, fmt.Errorf("hugot: model %s is closed", h.id)
	}
	vecs := make([][]float32, 0, len(texts))
	truncated := make([]bool, len(texts))
	for lo := 0; lo < len(texts); lo += h.batch {
		part := texts[lo:min(lo+h.batch, len(texts))]
		ids := make([][]int, len(part))
		types := make([][]int, len(part))
		masks := make([][]int, len(part))
		seq := 0
		for i, t := range part {
			_, enc, cut, err := h.prep.prepare(t, keep)
			if err != nil {
				return nil, nil, err
			}
			truncated[lo+i] = cut
			ids[i], types[i], masks[i] = enc.Ids, enc.TypeIds, enc.AttentionMask
			seq = max(seq, len(enc.Ids))
		}
		b := len(part)
		shape := ort.NewShape(int64(b), int64(seq))
		inputs := make([]ort.Value, len(h.inputs))
		destroy := func() {
			for _, v := range inputs {
				if v != nil {
					v.Destroy()
				}
			}
		}
		for k, name := range h.inputs {
			src := ids
			switch name {
			case "attention_mask":
				src = masks
			case "token_type_ids":
				src = types
			}
			data := make([]int64, b*seq) // right-padded with zeros (mask 0)
			for i, row := range src {
				for j, x := range row {
					data[i*seq+j] = int64(x)
				}
			}
			t, err := ort.NewTensor(shape, data)
			if err != nil {
				destroy()
				return nil, nil, fmt.Errorf("hugot: ONNX Runtime: %w", err)
			}
			inputs[k] = t
		}
		outputs := []ort.Value{nil}
		err := h.session.Run(inputs, outputs)
		destroy()
		if err != nil {
			return nil, nil, fmt.Errorf("hugot: model %s: %w", h.id, err)
		}
		ot, ok := outputs[0].(*ort.Tensor[float32])
		if !ok {
			outputs[0].Destroy()
			return nil, nil, fmt.Errorf("hugot: model %s: output is %T, want float32 tensor", h.id, outputs[0])
		}
		data := ot.GetData()
		if len(data) != b*seq*h.dim {
			ot.Destroy()
			return nil, nil, fmt.Errorf("hugot: model %s: output has %d values, want %d", h.id, len(data), b*seq*h.dim)
		}
		for i := range part {
			// Mean pooling over the attention mask, as hugot and sentence-transformers do.
			acc := make([]float64, h.dim)
			n := 0
			for j, m := range masks[i] {
				if m == 0 {
					continue
				}
				n++
				row := data[(i*seq+j)*h.dim : (i*seq+j+1)*h.dim]
				for c, x := range row {
					acc[c] += float64(x)
				}
			}
			v := make([]float32, h.dim)
			for c := range v {
				v[c] = float32(acc[c] / float64(max(n, 1)))
			}
			retrieve.Normalize(v)
			vecs = append(vecs, v)
		}
		ot.Destroy()
	}
	return vecs, truncated, nil
}

// limit returns the model's input limit in tokens (for benchmarks).
func (h *hugotORT) limit() int { return h.prep.limit }

// Split implements [retrieve.Splitter] as the pure-Go backend does.
func (h *hugotORT) Split(text string) ([]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.prep.split(text)
}
