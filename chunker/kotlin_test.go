package chunker

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Kotlin 2.x constructs and parse-error recovery. Each test runs with the
// compiled-in grammar: fwcd 0.3.8 in a plain build, tree-sitter-grammars 1.1.0 with
// the tag kotlin2; both must give these chunks.

// noParseErrors fails when a chunk is flagged parse_error or fallback.
func noParseErrors(t *testing.T, cs []Chunk) {
	t.Helper()
	for _, c := range cs {
		if c.ParseError || c.Fallback {
			t.Errorf("chunk %d (%s %q): parse_error=%v fallback=%v\n%s", c.Ordinal, c.Kind, c.Name, c.ParseError, c.Fallback, dump(cs))
		}
	}
}

func TestKotlinSoftKeywordMemberNames(t *testing.T) {
	// A member named like a modifier once ended its class early (fwcd), or made the
	// class one ERROR node (the newer grammar): the members after it lost their
	// header. Also soft keywords used as names inside bodies.
	src := `package demo.gate

class Gate(private val open: Boolean) {
    fun suspend(): Int = 1

    fun annotation(): String = "gate"

    fun value(where: String?): Int {
        where?.let { println(it) }
        return 2
    }

    fun close() {
        if (open) println("bye")
    }
}

fun route() {
    get("/health") { respond("ok") }
}
`
	_, cs := chunkString(t, "Gate.kt", src, Options{})
	hdr := "class Gate(private val open: Boolean)"
	check(t, cs, []want{
		{name: "suspend", start: 4, header: hdr}, // the two one-liners merge (small siblings)
		{name: "annotation", header: hdr},
		{name: "value", start: 8, end: 12, header: hdr},
		{name: "close", header: hdr},
		{name: "route", header: "-"},
	})
	noParseErrors(t, cs)
}

func TestKotlinContextParameters(t *testing.T) {
	// A context clause (receivers or parameters) belongs to the declaration below
	// it, like an annotation: no chunk ends with the next declaration's clause.
	src := `package demo.billing

/** Charges with the caller's meter. */
context(Meter)
fun charge(cents: Long) {
    tick(cents)
}

class Till(private val id: String) {
    context(meter: Meter, log: Log)
    fun open(float: Long) {
        log.write("$id $float")
    }

    context(meter: Meter)
    val reading: Long
        get() = meter.total

    fun close() {
        println(id)
    }
}

context(_: Meter)
fun Long.metered(): Long = this
`
	_, cs := chunkString(t, "Till.kt", src, Options{})
	hdr := "class Till(private val id: String)"
	check(t, cs, []want{
		{name: "charge", start: 3, end: 8, header: "-"},
		{name: "open", start: 10, end: 14, header: hdr},
		{name: "close", start: 19, end: 23, header: hdr}, // with the class's closing line
		{name: "metered", start: 24, end: 25, header: "-"},
	})
	if c := byName(cs, "reading"); c == nil || c.StartLine != 15 || c.Kind != KindProperty || !strings.HasPrefix(c.Text, "    context(meter: Meter)\n    val reading") {
		t.Errorf("reading: want a property chunk from its context clause (line 15)\n%s", dump(cs))
	}
	noParseErrors(t, cs)
}

func TestKotlinWhenGuards(t *testing.T) {
	src := `package demo.post

class Postage(private val base: Int) {
    fun fee(item: Item): Int = when (item) {
        is Card if item.grams > 100 -> base * 2
        is Parcel if (item.fragile || item.grams > 5_000) -> base * 9
        is Parcel -> base * 4
        else if item.express -> base * 3
        else -> base
    }

    fun zone(code: Int): String = "Z$code"
}
`
	_, cs := chunkString(t, "Postage.kt", src, Options{})
	hdr := "class Postage(private val base: Int)"
	check(t, cs, []want{
		{name: "fee", start: 4, end: 11, header: hdr},
		{name: "zone", start: 12, end: 13, header: hdr},
	})
	noParseErrors(t, cs)
}

func TestKotlinMultiDollarStrings(t *testing.T) {
	// An ERROR around a multi-dollar string once swallowed the header of the
	// members after it.
	src := `package demo.schema

class Schema(val name: String) {
    val json = $$"""{"$id": "$${name}", "price": "$9"}"""

    fun ref(): String = $$"$ref"

    fun describe(): String {
        return "schema $name"
    }
}
`
	_, cs := chunkString(t, "Schema.kt", src, Options{})
	hdr := "class Schema(val name: String)"
	check(t, cs, []want{
		{name: "ref", header: hdr},
		{name: "describe", start: 8, end: 11, header: hdr},
	})
	noParseErrors(t, cs)
}

// brokenRepo has a syntax error no rewrite repairs (an unclosed argument list in a
// property), which both grammars turn into ERROR nodes that swallow the class.
const brokenRepo = `package demo.store

import demo.db.Db

class Repo(private val db: Db) {
    fun load(id: Int): Row? {
        return db.find(id)
    }

    val cached = listOf(1, 2,

    fun drop(id: Int) {
        db.remove(id)
    }

    class Cursor(val at: Int) {
        fun next(): Int = at + 1

        fun reset() {
            println(at ))) 
        }
    }

    fun count(): Int = db.size
}

fun helper(): Int = 1
`

func TestKotlinRecoveryKeepsMembersUnderTheirClass(t *testing.T) {
	_, cs := chunkString(t, "Repo.kt", brokenRepo, Options{})
	hdr := "class Repo(private val db: Db)"
	check(t, cs, []want{
		{name: "Repo", start: 5, end: 5, header: "-"},
		{name: "load", start: 6, end: 9, header: hdr},
		{name: "cached", start: 10, end: 11, header: hdr},
		{name: "drop", start: 12, end: 15, header: hdr},
		{name: "next", header: "class Cursor(val at: Int)"},
		{name: "reset", header: "class Cursor(val at: Int)"},
		{name: "count", header: hdr},
		{name: "helper", start: 27, end: 27, header: "-"},
	})
	if c := byName(cs, "reset"); c != nil && (len(c.Header) != 2 || c.Header[0] != hdr) {
		t.Errorf("reset: header %q, want the chain [Repo, Cursor]", c.Header)
	}
	// Only the two broken declarations are flagged.
	for _, c := range cs {
		broken := c.Name == "cached" || c.Name == "reset"
		if c.ParseError != broken {
			t.Errorf("%s %q: parse_error=%v, want %v\n%s", c.Kind, c.Name, c.ParseError, broken, dump(cs))
		}
	}
}

func TestKotlinRecoveryBrokenHeader(t *testing.T) {
	// The class header itself is broken: the members still parse, under the header
	// read from the text, and the header is what is flagged.
	src := `package demo.store

class Ledger(private val name: String) : Base(, {
    fun credit(cents: Long) {
        println("$name +$cents")
    }

    fun debit(cents: Long) {
        println("$name -$cents")
    }
}
`
	_, cs := chunkString(t, "Ledger.kt", src, Options{})
	hdr := "class Ledger(private val name: String) : Base(,"
	check(t, cs, []want{
		{name: "credit", start: 4, end: 7, header: hdr},
		{name: "debit", start: 8, end: 11, header: hdr},
	})
	for _, c := range cs {
		if c.ParseError != (c.Name == "Ledger") {
			t.Errorf("%s %q: parse_error=%v\n%s", c.Kind, c.Name, c.ParseError, dump(cs))
		}
	}
}

func TestKotlinRecoveryOversizedBrokenMember(t *testing.T) {
	// A member over the cap with an error inside its body is split at its
	// statements like any other (its own parse keeps it whole); only the piece with
	// the error is flagged. Its neighbours stay whole, all under the class.
	var body strings.Builder
	for i := 0; i < 40; i++ {
		body.WriteString("        total += weights[index] * factor + offset\n")
	}
	src := "class Scale(val factor: Int) {\n    fun small() = 1\n\n    fun big(weights: IntArray) {\n" +
		body.String() + "        broken(( ]\n    }\n\n    fun after() = 2\n}\n"
	_, cs := chunkString(t, "Scale.kt", src, Options{})
	hdr := "class Scale(val factor: Int)"
	check(t, cs, []want{{name: "small", header: hdr}, {name: "after", header: hdr}})
	flagged := 0
	for _, c := range cs {
		if c.ParseError {
			flagged++
			if !strings.Contains(c.Text, "broken(( ]") || len(c.Header) < 1 || c.Header[0] != hdr {
				t.Errorf("chunk %d flagged: header %q\n%s", c.Ordinal, c.Header, dump(cs))
			}
		}
	}
	if flagged != 1 {
		t.Errorf("%d chunks flagged, want the one with the error\n%s", flagged, dump(cs))
	}
}

func TestKotlinRecoveryAtSmallCaps(t *testing.T) {
	// Recovery keeps the invariants at every cap (chunkString validates).
	for _, c := range []int{40, 120, 400} {
		chunkString(t, "Repo.kt", brokenRepo, Options{MaxChars: c})
	}
}

// TestSharedKotlinCases checks the handed-over cases 21 (context parameters) and
// 22 (when guards) against their expected.md (skipped when absent).
func TestSharedKotlinCases(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "cases", "chunker")
	// read skips the subtest t (not the parent: Skipf must be called from the
	// goroutine of the test it skips) when ../shared does not hold the case.
	read := func(t *testing.T, name string) string {
		t.Helper()
		raw, err := os.ReadFile(filepath.Join(dir, name, "input.kt"))
		if err != nil {
			t.Skipf("no shared case %s: %v", name, err)
		}
		return string(raw)
	}
	t.Run("21-kt-context-parameters", func(t *testing.T) {
		_, cs := chunkString(t, "input.kt", read(t, "21-kt-context-parameters"), Options{})
		hdr := "class LedgerService(private val name: String)"
		check(t, cs, []want{
			{name: "announce", header: "-"},
			{name: "transfer", header: hdr},
			{name: "summary", header: hdr},
			{name: "close", header: hdr},
			{name: "audited", header: "-"},
			{name: "unrelated", header: "-"},
		})
		for name, lines := range map[string][2]int{"announce": {11, 15}, "transfer": {18, 22}, "summary": {24, 26}, "close": {28, 30}, "audited": {33, 34}, "unrelated": {36, 36}} {
			c := byName(cs, name)
			if c == nil {
				continue
			}
			// The chunk holds the declaration's lines (with its KDoc and context);
			// blank lines after it and its class's closing line may ride along, the
			// next declaration's lines not.
			if c.StartLine != lines[0] || c.EndLine < lines[1] || c.EndLine > lines[1]+2 {
				t.Errorf("%s: lines %d-%d, want %d-%d\n%s", name, c.StartLine, c.EndLine, lines[0], lines[1], dump(cs))
			}
		}
		if c := byName(cs, "summary"); c != nil && c.Kind != KindProperty {
			t.Errorf("summary: kind %s, want property", c.Kind)
		}
		noParseErrors(t, cs)
	})
	t.Run("22-kt-when-guard", func(t *testing.T) {
		_, cs := chunkString(t, "input.kt", read(t, "22-kt-when-guard"), Options{})
		hdr := "class Tariff(private val base: Int)"
		check(t, cs, []want{
			{name: "price", start: 11, end: 18, header: hdr},
			{name: "label", start: 19, end: 23, header: hdr},
			{name: "currency", header: hdr},
			{name: "freeShipping", start: 27, end: 27, header: "-"},
		})
		noParseErrors(t, cs)
	})
}
