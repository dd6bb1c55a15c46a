//go:build kotlin2

// The generated parser of @tree-sitter-grammars/tree-sitter-kotlin, installed into src/ by
// `make grammar` (not committed). src_stamp.h, which the install writes beside this
// file, changes whenever src/ does: the Go build cache hashes only this folder's own
// files, so without it a changed src/parser.c could be linked from a stale cached object.
#include "names.h"
#include "src_stamp.h"
#include "src/parser.c"
