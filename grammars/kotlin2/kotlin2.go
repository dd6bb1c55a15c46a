//go:build kotlin2

package kotlin2

// #cgo CFLAGS: -std=c11 -fPIC -I${SRCDIR}/src -w
// #include <stdint.h>
// typedef struct TSLanguage TSLanguage;
// const TSLanguage *tree_sitter_kotlin2(void);
import "C"

import (
	"unsafe"

	sitter "github.com/smacker/go-tree-sitter"
)

// Available reports whether the grammar is compiled in (build tag kotlin2).
const Available = true

// GetLanguage returns the tree-sitter language (ABI 14).
func GetLanguage() *sitter.Language {
	return sitter.NewLanguage(unsafe.Pointer(C.tree_sitter_kotlin2()))
}
