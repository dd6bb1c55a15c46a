package chunker

import (
	"fmt"
	"strings"
	"testing"
)

// Tests of C/C++ error recovery that keeps names: project macros and test-framework
// macros (rewritten in package languages/c) and long block comments.

// TestCLicenseBlockParagraphs: a block comment over the cap at the top of a C file
// is cut at its paragraph breaks (blank comment lines), not windowed, and the
// function after it keeps its name.
func TestCLicenseBlockParagraphs(t *testing.T) {
	para := strings.Repeat(" * Permission is granted to use this software for any purpose at all.\n", 6)
	src := "/*\n" + para + " *\n" + para + " *\n" + para + " */\n\n#include <stdio.h>\n\nint answer(void)\n{\n    return 42;\n}\n"
	_, cs := chunkString(t, "lic.c", src, Options{})
	for _, c := range cs {
		if c.Fallback {
			t.Errorf("L%d-%d: fallback; want paragraph cuts\n%s", c.StartLine, c.EndLine, dump(cs))
		}
	}
	check(t, cs, []want{{name: "answer", header: "-"}})
}

// TestCPPTestMacroChunks: Catch2/doctest and gtest test macros at the top level
// are named definition chunks without parse errors, named by their first string
// argument or their identifier arguments; a noexcept macro after a parameter list
// costs no name.
func TestCPPTestMacroChunks(t *testing.T) {
	src := "#include \"catch.hpp\"\n\nTEST_CASE(\"parses an empty list\", \"[parser]\") {\n    REQUIRE(parse(\"\").empty());\n    SECTION(\"with spaces\") {\n        REQUIRE(parse(\"  \").empty());\n    }\n}\n\n" +
		"TEST_F(ParserTest, RejectsGarbage) {\n    EXPECT_FALSE(p.ok());\n}\n\n" +
		"class Queue {\npublic:\n    Queue(Queue &&other) LIB_NOEXCEPT;\n    int size() const LIB_NOEXCEPT { return n_; }\nprivate:\n    int n_ = 1;\n};\n"
	_, cs := chunkString(t, "parser_test.cpp", src, Options{})
	check(t, cs, []want{{name: "parses an empty list", start: 3, end: 9, header: "-"}, {name: "ParserTest.RejectsGarbage", start: 10, header: "-"}})
	for _, c := range cs {
		if c.ParseError || c.Fallback {
			t.Errorf("L%d-%d: parse_error %v, fallback %v\n%s", c.StartLine, c.EndLine, c.ParseError, c.Fallback, dump(cs))
		}
	}
}

// TestCPPRawStringNotHeader: raw string literals holding quotes, braces, a "#if"
// line and a "}" at the start of a line are no code to the rewrite: the members
// of the classes around and after them carry their class's header, never text of
// a string, and nothing is flagged.
func TestCPPRawStringNotHeader(t *testing.T) {
	var members strings.Builder
	for i := 0; i < 12; i++ {
		fmt.Fprintf(&members, "  int member_%d(int x) {\n    int y = x * %d + offset_;\n    return y + %d;\n  }\n", i, i, i)
	}
	src := "#include <string>\nstatic const char *kUsage = R\"doc(\nusage: tool {\n#if not a directive\n  \"quoted\" ) not the end\n}\n)doc\";\n" +
		"class Store {\n public:\n" + members.String() + "  int offset_ = 1;\n  const char *sql() const { return R\"sql(\nSELECT '}' FROM t WHERE a = \"x\" AND b = ')';\n{\n)sql\"; }\n};\n" +
		"class After {\n public:\n" + members.String() + "};\n"
	_, cs := chunkString(t, "store.cpp", src, Options{})
	n := 0
	for _, c := range cs {
		if c.ParseError || c.Fallback {
			t.Errorf("L%d-%d: parse_error %v, fallback %v\n%s", c.StartLine, c.EndLine, c.ParseError, c.Fallback, dump(cs))
		}
		if strings.HasPrefix(c.Name, "member_") {
			n++
			if len(c.Header) != 1 || (c.Header[0] != "class Store" && c.Header[0] != "class After") {
				t.Errorf("%s L%d: header %q", c.Name, c.StartLine, c.Header)
			}
		}
	}
	if n == 0 {
		t.Errorf("no member chunks\n%s", dump(cs))
	}
	check(t, cs, []want{{name: "kUsage", header: "-"}, {name: "sql", header: "class Store"}})
}
