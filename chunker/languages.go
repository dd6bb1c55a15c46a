package chunker

// Package languages attaches the text-level rules of C, C++, C#, Kotlin and Swift
// (source rewrites, Kotlin's text outline) to their grammars specs in its init. Every
// program that chunks imports this package, so the rules are in place before its
// own packages initialise; chunks depend on them.
import _ "github.com/repoctx/repoctx/languages"
