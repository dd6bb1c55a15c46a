//go:build !onnxruntime

package retrieve

import "errors"

// ORTAvailable reports whether this binary can run models with ONNX Runtime
// ([HugotOptions.Backend] "ort"): only when built with `-tags onnxruntime`.
const ORTAvailable = false

func newHugotORT(mf modelFiles, id string, opts HugotOptions) (Embedder, error) {
	return nil, errors.New("retrieve: the ort backend needs a binary built with -tags onnxruntime (see the retrieve package documentation)")
}
