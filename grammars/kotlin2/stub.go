//go:build !kotlin2

package kotlin2

import sitter "github.com/smacker/go-tree-sitter"

// Available reports whether the grammar is compiled in (build tag kotlin2).
const Available = false

// GetLanguage returns nil: the grammar is compiled in only with the build tag kotlin2.
func GetLanguage() *sitter.Language { return nil }
