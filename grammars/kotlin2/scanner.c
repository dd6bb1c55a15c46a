//go:build kotlin2

// The external scanner of @tree-sitter-grammars/tree-sitter-kotlin, installed into
// src/ by fetch.sh (not committed).
#include "names.h"
#include "src/scanner.c"
