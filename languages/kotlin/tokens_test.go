package kotlin

import (
	"bytes"
	"math/rand"
	"strings"
	"testing"

	sitter "github.com/smacker/go-tree-sitter"

	"github.com/repoctx/repoctx/grammars"
)

// allKotlinRules turns every token rewrite of this build on: the shared ones and the
// compiled-in grammar's (allGrammarRules, in fwcd_test.go or kotlin2_test.go).
var allKotlinRules = kotlinRules{
	WhenGuard: true, Context: true, MultiDollar: true, SoftNames: true, NullableRef: true,
	grammarRules: allGrammarRules,
}

// tokenCase is one case of TestKotlinTokenRewrites: rules r rewrite in to out.
type tokenCase struct {
	r       kotlinRules
	in, out string
}

// TestKotlinTokenRewrites: each rule rewrites its construct, keeps the length and the
// line breaks, and leaves look-alikes alone.
func TestKotlinTokenRewrites(t *testing.T) {
	guard := kotlinRules{WhenGuard: true}
	ctx := kotlinRules{Context: true}
	dollar := kotlinRules{MultiDollar: true}
	soft := kotlinRules{SoftNames: true}
	tests := []tokenCase{
		// when guards
		{guard, "when (p) {\n  is Box if p.heavy -> 1\n  else -> 2\n}", "when (p) {\n  is Box ,  p.heavy -> 1\n  else -> 2\n}"},
		{guard, "when (p) {\n  is A if (x ||\n    y) -> 1\n}", "when (p) {\n  is A ,  (x ||\n    y) -> 1\n}"},
		{guard, "when (p) {\n  is A -> 1\n  else if p.ok -> 2\n}", "when (p) {\n  is A -> 1\n  true ,  p.ok -> 2\n}"},
		{guard, "when (p) { is A -> if (c) 1 else 2 }", "when (p) { is A -> if (c) 1 else 2 }"},               // an if in a branch body
		{guard, "when {\n  a if b -> 1\n}", "when {\n  a if b -> 1\n}"},                                       // no subject: no guards
		{guard, "when (p) {\n  is A -> f(if (c) 1 else 2)\n}", "when (p) {\n  is A -> f(if (c) 1 else 2)\n}"}, // nested in parens
		{guard, "when (p) {\n  is A -> x\n    ?: if (c) 1 else 2\n}", "when (p) {\n  is A -> x\n    ?: if (c) 1 else 2\n}"},
		{guard, "when (p) {\n  is A -> {\n    if (c) f()\n  }\n  is B if q -> 3\n}", "when (p) {\n  is A -> {\n    if (c) f()\n  }\n  is B ,  q -> 3\n}"},
		{guard, `when (p) { "if" -> 1 }`, `when (p) { "if" -> 1 }`},
		// context clauses
		{ctx, "context(log: Log, tx: Tx)\nfun f() {}", "@ontext(" + strings.Repeat(" ", 16) + ")\nfun f() {}"},
		{ctx, "  context(Log) private val x = 1", "  @ontext(   ) private val x = 1"},
		{ctx, "val b: context(Scope) T.() -> Unit = {}", "val b: @ontext(     ) T.() -> Unit = {}"},
		{ctx, "fun g() { context(x) }", "fun g() { context(x) }"},     // a call
		{ctx, "x.context(a)\nfun f() {}", "x.context(a)\nfun f() {}"}, // a member call
		{ctx, "fun context(a: Int) = 1", "fun context(a: Int) = 1"},   // a function named context
		// multi-dollar strings
		{dollar, `val j = $$"id $$id cost $9 t ${x} $$$n"`, `val j =   "id _$id cost _9 t _{x} __$n"`},
		{dollar, `val q = $$"""a $${f("}")} $ b"""`, `val q =   """a _${f("}")} _ b"""`},
		{dollar, `val s = "a $b ${c} $$"`, `val s = "a $b ${c} $$"`},
		// soft keywords used as names
		{soft, "class A {\n  fun suspend() = 1\n  fun Foo.value() = 2\n}", "class A {\n  fun Suspend() = 1\n  fun Foo.Value() = 2\n}"},
		{soft, "where?.let { }\nwhere = p\nvar enum by x\ne.enum = 1", "Where?.let { }\nWhere = p\nvar Enum by x\ne.Enum = 1"},
		{soft, "val id = t.insert { } get t.id", "val id = t.insert { } Get t.id"},
		{soft, "get(\"/\") { }\nget { }\nget(i)\nset(k, v)", "Get(\"/\") { }\nGet { }\nGet(i)\nSet(k, v)"},
		{soft, "val f = suspend { 1 }\nif (suspend(w)) open()\nif (suspend) x", "val f = Suspend { 1 }\nif (Suspend(w)) Open()\nif (Suspend) x"},
		{soft, "f(dynamic: Boolean, value: Int)\nn++ ; dynamic++", "f(Dynamic: Boolean, Value: Int)\nn++ ; Dynamic++"},
		{soft, "enum class E { enum, data }", "enum class E { Enum, Data }"},
		// keywords that stay keywords
		{soft, "override suspend fun f() = 1\nval x: Int get() = 1\nvar y = 0\n  private set\n  set(value) { field = value }",
			"override suspend fun f() = 1\nval x: Int get() = 1\nvar y = 0\n  private set\n  set(Value) { Field = Value }"},
		{soft, "class A { var x = 1; private set }", "class A { var x = 1; private set }"},
		{soft, "class A<T> where T : B\nval x by lazy { 1 }\nval t: suspend () -> Unit\ninit { }\nconstructor(a: Int)",
			"class A<T> where T : B\nval x by lazy { 1 }\nval t: suspend () -> Unit\ninit { }\nconstructor(a: Int)"},
		{soft, "@file:JvmName(\"X\")\n@get:Inject val a = 1", "@file:JvmName(\"X\")\n@get:Inject val a = 1"},
		{soft, `val s = "where = 1" // enum = 2`, `val s = "where = 1" // enum = 2`},
		{kotlinRules{NullableRef: true}, "f(String?::plus)", "f(String ::plus)"},
	}
	tests = append(tests, grammarTokenCases...) // the compiled-in grammar's rules
	for _, tt := range tests {
		got := string(rewriteKotlinTokens([]byte(tt.in), tt.r))
		if got != tt.out {
			t.Errorf("rewrite(%q)\n got %q\nwant %q", tt.in, got, tt.out)
		}
		if len(got) != len(tt.in) {
			t.Errorf("rewrite(%q): length %d, want %d", tt.in, len(got), len(tt.in))
		}
	}
}

// TestKotlinTokenRewritesKeepLines: on random token soup (unbalanced brackets and
// strings included) every rule keeps the length and every line break, and a text
// without a change is returned as is (no copy).
func TestKotlinTokenRewritesKeepLines(t *testing.T) {
	atoms := []string{"when", "(", ")", "{", "}", "[", "]", "is", "if", "else", "->", "context", "fun", "val", "get",
		"set", "suspend", "where", "enum", "value", ".", "?.", "::", "=", "==", "+=", "\"", `"""`, "$", "$$", "${",
		"'", "'a'", "//", "/*", "*/", "\n", " ", "\t", "x", "eq", "0b1", "..<", "@A", "@", "object", ":", "by", ",",
		"é", "`n`", "\\", ";", "++", "?", "<", ">", "1"}
	rnd := rand.New(rand.NewSource(7))
	for i := 0; i < 20000; i++ {
		var sb strings.Builder
		for n := rnd.Intn(30); n >= 0; n-- {
			sb.WriteString(atoms[rnd.Intn(len(atoms))])
			if rnd.Intn(3) == 0 {
				sb.WriteByte(' ')
			}
		}
		in := []byte(sb.String())
		out := rewriteKotlinTokens(in, allKotlinRules)
		if len(out) != len(in) {
			t.Fatalf("rewrite(%q): length %d", in, len(out))
		}
		for k := range in {
			if (in[k] == '\n') != (out[k] == '\n') {
				t.Fatalf("rewrite(%q) = %q: line break moved at %d", in, out, k)
			}
		}
		if bytes.Equal(in, out) && len(in) > 0 && &in[0] != &out[0] {
			t.Fatalf("rewrite(%q) copied an unchanged text", in)
		}
	}
}

// kotlinFaults are small Kotlin files, one per fault kind the rewrites handle, each
// valid Kotlin 2.2 that a grammar mis-parses without them.
var kotlinFaults = map[string]string{
	"soft keyword member names": `class Gate(private val open: Boolean) {
    fun suspend(): Int = 1
    fun annotation(): String = "x"
    fun value() = 2
    fun close() {
        if (open) println("bye")
    }
}
`,
	"soft keywords as names in expressions": `fun route(query: Query?) {
    val where = query?.where
    where?.let { println(it) }
    var enum = 0
    enum = 1
    val id = table.insert { it[name] = "n" } get table.id
    get("/health") { respond("ok") }
    val job = suspend { 42 }
}
`,
	"context parameters and receivers": `context(Log)
fun announce(message: String) {
    record(message)
}

class Ledger(private val name: String) {
    context(log: Log, tx: Tx)
    fun move(cents: Long) {
        log.record("$name $cents")
    }

    context(log: Log)
    val summary: String
        get() = "ledger $name"
}

fun run(block: context(Log) () -> Unit) = Unit
`,
	"when guards": `fun fee(p: Parcel): Int = when (p) {
    is Letter if p.grams > 500 -> 3
    is Box if (p.fragile || p.grams > 10_000) -> 8
    is Box -> 5
    else if p.express -> 9
    else -> 1
}
`,
	"multi-dollar strings": `val schema = $$"""{"$id": "$${name}", "price": "$9"}"""
val ref = $$"$ref"
fun tag(x: Int) = $$"<$$x>"
`,
	"accessor annotations": `class Config {
    val id
        @Suppress("DEPRECATION")
        get() = 1
    var level: Int = 0
        @Inject set
}
`,
	"constructor after annotation lines": `class Session<S : Any>
@PublishedApi
internal constructor(
    val type: S,
) {
    fun f() = 1
}
`,
	"infix names starting with e": `fun q() {
    val a = t.id eq 5
    val b = x exactly y
    when (i) {
        in evens -> 1
        in odds -> 2
        else -> 3
    }
}
`,
	"open-ended ranges and fwcd types": `fun f(block: Builder.Config.() -> Unit, g: Op<Boolean>?.() -> Op<Boolean>) {
    for (i in 0..<10) println(i)
    val mask = 0b1010
    current().name = "x"
    val l = object : Logger by base {
        override fun log() = Unit
    }
}
`,
}

// TestKotlinFaultsParse: with the compiled-in grammar's rewrites each fault kind
// parses without errors (both builds: plain, fwcd 0.3.8; tag kotlin2,
// tree-sitter-grammars 1.1.0).
func TestKotlinFaultsParse(t *testing.T) {
	ps := grammars.NewParsers(0)
	defer ps.Close()
	for name, src := range kotlinFaults {
		tree, _, err := ps.Parse(grammars.Kotlin, []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if tree.RootNode().HasError() {
			t.Errorf("%s (%s): parse errors after the rewrites:\n%s", name, grammars.KotlinGrammar, tree.RootNode().String())
		}
		tree.Close()
	}
}

// TestKotlinContextSignature: a context clause stays in the signature (it is parsed
// as an annotation, which signatures leave out).
func TestKotlinContextSignature(t *testing.T) {
	src := []byte("@Deprecated(\"x\")\ncontext(log: Log)\nfun f(a: Int) {}\n")
	ps := grammars.NewParsers(0)
	defer ps.Close()
	tree, parsed, err := ps.Parse(grammars.Kotlin, src)
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	var fn *sitter.Node
	for _, c := range grammars.Children(tree.RootNode()) {
		if d, _ := grammars.Kotlin.Definition(c); d != nil {
			fn = d
		}
	}
	if fn == nil {
		t.Fatalf("no definition in %s", tree.RootNode().String())
	}
	if got, want := grammars.Kotlin.Signature(fn, src, parsed), "context(log: Log) fun f(a: Int)"; got != want {
		t.Errorf("Signature = %q, want %q", got, want)
	}
}
