//go:build !onnxruntime

package hugot

import (
	"errors"

	"github.com/repoctx/repoctx/retrieve"
)

// ORTAvailable reports whether this binary can run models with ONNX Runtime
// ([Options.Backend] "ort"): only when built with `-tags onnxruntime`.
const ORTAvailable = false

func newHugotORT(mf modelFiles, id string, opts Options) (retrieve.Embedder, error) {
	return nil, errors.New("hugot: the ort backend needs a binary built with -tags onnxruntime (see the retrieve package documentation)")
}
