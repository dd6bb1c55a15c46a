// Renames the grammar's exported C symbols (see doc.go): smacker's bundled Kotlin
// grammar exports the same names.
#define tree_sitter_kotlin tree_sitter_kotlin2
#define tree_sitter_kotlin_external_scanner_create tree_sitter_kotlin2_external_scanner_create
#define tree_sitter_kotlin_external_scanner_destroy tree_sitter_kotlin2_external_scanner_destroy
#define tree_sitter_kotlin_external_scanner_scan tree_sitter_kotlin2_external_scanner_scan
#define tree_sitter_kotlin_external_scanner_serialize tree_sitter_kotlin2_external_scanner_serialize
#define tree_sitter_kotlin_external_scanner_deserialize tree_sitter_kotlin2_external_scanner_deserialize

#if !__has_include("src/parser.c")
#error "grammars/kotlin2: the grammar's C source is missing; run `make grammar` (go run ./grammars/kotlin2/install) first"
#endif
