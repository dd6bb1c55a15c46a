package assemble_test

import (
	"github.com/repoctx/repoctx/assemble"
	"github.com/repoctx/repoctx/complete"
)

// A model behind an OpenAI-compatible endpoint is a drafter.
var _ assemble.Drafter = (*complete.Model)(nil)
