package grammars

// Decl is one declaration of a text outline (Recovery.Outline): what a file's text
// says about its structure without a parser, for chunking the parts of a file that
// its grammar could not parse.
type Decl struct {
	// Kind is Function, Class or Property.
	Kind string
	// Name is the declared name ("Repo", "load", "Companion"), or "".
	Name string
	// Signature is the declaration's text up to its body, without annotations and
	// comments, tidied like Spec.Signature: "class Repo(private val db: Db)".
	Signature string
	// Start and End are the byte range of the declaration: from the start of the
	// line of its first token (annotations and modifiers included) to the end of its
	// last line (the line break excluded).
	Start, End int
	// Body is the byte offset of the `{` that opens a class's body and BodyEnd that of
	// its matching `}`; both -1 when the declaration has no member body.
	Body, BodyEnd int
	// Members are the declarations that start a line inside the body.
	Members []Decl
}

// Recovery tells the chunker how to chunk a file whose parse has errors along its
// text outline: each declaration of the outline is parsed on its own (the parser
// sees only that declaration's bytes, so node offsets stay those of the file), and a
// class whose declaration still fails is cut into its members, each parsed on its
// own inside a stand-in class, under a header recovered from the text.
type Recovery struct {
	// Outline returns the file's top-level declarations, in order. parsed is the
	// text the parser was given (Spec.Rewrite of src, same length): the structure is
	// read from it, names and signatures from src.
	Outline func(parsed, src []byte) []Decl
	// MemberPrefix and MemberSuffix wrap one member of a class so that it parses on
	// its own ("class Q{" and "}" for Kotlin); GapPrefix and GapSuffix wrap the text
	// between members (Kotlin: enum entries, "enum class Q{" and "}").
	MemberPrefix, MemberSuffix string
	GapPrefix, GapSuffix       string
}
