package grammars

import "fmt"

// Rules are a language's text-level rules: what its grammar alone gets wrong, worked
// around on the text. They live in the language's own package (languages/c for C and
// C++, languages/csharp, languages/kotlin, languages/ruby, languages/rust,
// languages/swift), which imports this one; package languages attaches them to the
// registered specs with [Attach], and the chunker imports package languages, so every
// program that chunks has them. A spec without its rules parses with the grammar
// alone. A change to a language's rules bumps its Spec.Version, which stays in the
// spec.
type Rules struct {
	// Rewrite becomes the spec's Rewrite (see [Spec.Rewrite]); nil: none.
	Rewrite func(src []byte) []byte
	// Recover becomes the spec's Recover (see [Spec.Recover]); nil: none.
	Recover *Recovery
}

// Attach sets the Rewrite and Recover of the registered language name to r's. It
// returns an error if name is not registered or already has a Rewrite or Recover.
// Specs are read without locking: call Attach from an init function (package
// languages does), before any parse.
func Attach(name string, r Rules) error {
	mu.Lock()
	defer mu.Unlock()
	s := byName[name]
	if s == nil {
		return fmt.Errorf("grammars: rules for %q, which is not registered", name)
	}
	if s.Rewrite != nil || s.Recover != nil {
		return fmt.Errorf("grammars: rules for %q attached twice", name)
	}
	s.Rewrite, s.Recover = r.Rewrite, r.Recover
	return nil
}
