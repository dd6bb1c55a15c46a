package c

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	sitter "github.com/smacker/go-tree-sitter"

	"github.com/repoctx/repoctx/grammars"
)

// TestCRewrite: the extern "C" idiom's lines are blanked between #ifdef __cplusplus
// and #endif only; the length never changes.
func TestCRewrite(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"#ifdef __cplusplus\nextern \"C\" {\n#endif\nint f(void);\n#ifdef __cplusplus\n}\n#endif\n",
			"#ifdef __cplusplus\n            \n#endif\nint f(void);\n#ifdef __cplusplus\n \n#endif\n"},
		{"#if defined(__cplusplus)\n} /* extern \"C\" */\n#endif\n", "#if defined(__cplusplus)\n                  \n#endif\n"},
		{"int g(void) {\n}\n", "int g(void) {\n}\n"}, // no __cplusplus: untouched
		{"#ifdef __cplusplus\nclass A {};\n#endif\n}\n", "#ifdef __cplusplus\nclass A {};\n#endif\n}\n"},
		// A function header that differs between branches: directives and the second
		// branch go, the first branch stays.
		{"#if OLD || \\\n    NEWER\nstatic void f(int a, int b) {\n#else\nstatic void f(int a) {\n#endif\n    g(a);\n}\n",
			"            \n         \nstatic void f(int a, int b) {\n     \n" + strings.Repeat(" ", len("static void f(int a) {")) + "\n      \n    g(a);\n}\n"},
		// Balanced branches (an #ifdef'd function) are kept; an include guard goes.
		{"#ifndef H\n#define H\n#ifdef X\nint f(void) { return 1; }\n#else\nint f(void) { return 0; }\n#endif\n#endif\n",
			"         \n         \n#ifdef X\nint f(void) { return 1; }\n#else\nint f(void) { return 0; }\n#endif\n      \n"},
		{"// c\n#if !defined(H_) // x\n#define H_\nint x;\n#endif /* H_ */\n// end\n", "// c\n                     \n          \nint x;\n               \n// end\n"},
		{"#ifndef H\n#define H 1\nint x;\n#endif\n", "#ifndef H\n#define H 1\nint x;\n#endif\n"}, // a value: no guard
		{"#ifndef H\n#define H\n#endif\nint x;\n", "#ifndef H\n#define H\n#endif\nint x;\n"},     // nothing inside: a default
		// An amalgamation's guards go too; one with an #else stays.
		{"int a;\n#ifndef A_H\n#define A_H\nint x;\n#ifdef Y\n#endif\n#endif\n#ifndef B\n#define B\nint y;\n#else\n#endif\n",
			"int a;\n           \n           \nint x;\n#ifdef Y\n#endif\n      \n#ifndef B\n#define B\nint y;\n#else\n#endif\n"},
		// A macro call statement among declarations goes, but not one that ends a
		// declaration.
		{"struct s {\n\tMOCK_METHOD(void, f, ());\n};\nVISIT_TYPE(long, int);\nstatic T x =\n    T_INIT(x);\n",
			"struct s {\n\t                         \n};\n                      \nstatic T x =\n    T_INIT(x);\n"},
		// A lone macro call among declarations goes, over a line continuation too.
		{"PUSH_(4251 \\\n/* c */)\nint x;\n", "            \n        \nint x;\n"},
		{"#if FMT_HAS_INCLUDE(<sys/stat.h>) && X\n#endif\n", "#if FMT_HAS_INCLUDE(_sys_stat_h_) && X\n#endif\n"},
		// Macros around declarations go; caps types and names stay.
		{"FMT_CONSTEXPR inline void f();\nint CJSON_CDECL main(void);\nCJSON_PUBLIC(cJSON *) cJSON_Parse(const char *v);\nFILE *f;\nMYTYPE x;\nstatic DIR *d;\n",
			"              inline void f();\nint             main(void);\n             cJSON *  cJSON_Parse(const char *v);\nFILE *f;\nMYTYPE x;\nstatic DIR *d;\n"},
		{"static void f(__unused int a) {\n\tTAILQ_FOREACH(c, &clients, entry) {\n\t\tg(c);\n\t}\n}\nFMT_BEGIN_NAMESPACE\n",
			"static void f(         int a) {\n\twhile        (c, &clients, entry) {\n\t\tg(c);\n\t}\n}\n                   \n"},
		// BSD queue and tree macros used as types become one identifier each.
		{"static TAILQ_HEAD(, window) alerts = TAILQ_HEAD_INITIALIZER(alerts);\nstruct s {\n\tRB_HEAD(tree, node) t;\n\tTAILQ_ENTRY(ibuf)\t entry;\n};\n",
			"static TAILQ_HEAD___window_ alerts = TAILQ_HEAD_INITIALIZER(alerts);\nstruct s {\n\tRB_HEAD_tree__node_ t;\n\tTAILQ_ENTRY_ibuf_\t entry;\n};\n"},
		// An attribute macro with integer arguments before a function's name goes.
		{"static void printflike(3, 4)\nf(const char *fmt, ...)\n{\n}\nstatic char * printflike(1, 2)\ng(const char *fmt, ...);\n",
			"static void                 \nf(const char *fmt, ...)\n{\n}\nstatic char *                 \ng(const char *fmt, ...);\n"},
		// An operator or an empty macro argument becomes "_"; a loop macro may have a
		// blank before its "(".
		{"int f(void)\n{\n\tif (timercmp(&a, &b, >))\n\t\treturn (RB_NEXT(t, , e));\n\tTAILQ_FOREACH (c, &l, entry) {\n\t}\n}\n",
			"int f(void)\n{\n\tif (timercmp(&a, &b, _))\n\t\treturn (RB_NEXT(t,_, e));\n\twhile         (c, &l, entry) {\n\t}\n}\n"},
		// A block comment on a directive line goes; a declaration `Foo bar(3, 4);` stays.
		{"#define X (7 /* o+rwx */)\nstatic Foo bar(3, 4);\n", "#define X (7            )\nstatic Foo bar(3, 4);\n"},
		// Braces in comments and literals do not count.
		{"#if A\nchar *s = \"{\"; /* { */ // {\n#endif\n", "#if A\nchar *s = \"{\"; /* { */ // {\n#endif\n"},
	} {
		got := string(cRewrite([]byte(c.in), true))
		if got != c.want || len(got) != len(c.in) {
			t.Errorf("cRewrite(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzCRewrite: the C and C++ rewrite keeps the length and every line break where
// it was, and never panics.
func FuzzCRewrite(f *testing.F) {
	for _, s := range []string{
		"#ifdef __cplusplus\nextern \"C\" {\n#endif\nint f(void);\n#ifdef __cplusplus\n}\n#endif\n",
		"#if A\nvoid f(int a) {\n#else\nvoid f(void) {\n#endif\n}\n",
		"FMT_CONSTEXPR inline void f();\nTAILQ_FOREACH(a, b, c)\n\tg();\n#if X(<a/b.h>)\n#endif\n",
		"namespace a { extern \"C\" { int CJSON_CDECL main(void) { __unused int x; } } }\n",
		"/* { */ \"{\" '\\'' #if\n\\\n#endif",
		"static TAILQ_HEAD(, w) a;\nstatic void printflike(3, 4)\nf(int a)\n{ if (timercmp(a, b, >=)) g(x, , y); TAILQ_FOREACH (a, b, c) {} }\n#define X /* c */ 1\n",
	} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, src string, loops bool) { checkSameShape(t, src, cRewrite([]byte(src), loops)) })
}

// The C++ macro idioms of cRewrite parse without errors after the rewrite: each
// snippet (from fmt's and googletest's sources, cut down) failed before its rule.
func TestCPPMacroIdioms(t *testing.T) {
	ps := grammars.NewParsers(5 * time.Second)
	defer ps.Close()
	for _, src := range []string{
		// specifier macros in a class body: before a keyword, a constructor, "~", a type and a name
		"class FMT_API file {\n int fd_;\n public:\n  FMT_CONSTEXPR file(int fd) : fd_(fd) {}\n  FMT_API ~file() noexcept;\n  FMT_API void close();\n  FMT_API std::size_t read(void* buf);\n  FMT_CONSTEVAL FMT_ALWAYS_INLINE file() : fd_(0) {}\n};\n",
		// a function-like macro in a class head; a scoped name in #if
		"class FMT_SO_VISIBILITY(\"default\") format_error : public std::runtime_error {\n using std::runtime_error::runtime_error;\n};\n#if FMT_HAS_CPP_ATTRIBUTE(clang::lifetimebound)\n#endif\n",
		// FMT_ENABLE_IF as a template parameter (over two lines), `if FMT_CONSTEXPR20 (`
		"template <typename T,\n          FMT_ENABLE_IF(!std::is_same<T, char>::value &&\n                        std::is_integral<T>::value)>\nauto f(T v) -> int {\n  if FMT_CONSTEXPR20 (sizeof(T) > 4) return 1;\n  FMT_CONSTEXPR20 size_t n = 2;\n  return 0;\n}\n",
		// an attribute macro after a parameter's name; a qualified constructor
		"auto join(const Tuple& tuple FMT_LIFETIMEBOUND, string_view sep) -> int;\nFMT_FUNC format_error::format_error(int x) {}\n",
		// gtest: keyword test names, statement macros among declarations, throw as an argument
		"TEST(format_test, enum) { EXPECT_EQ(1, 1); }\nTEST(ostream_test, template) {\n  EXPECT_THROW(throw std::runtime_error(\"\"), std::exception);\n}\nstruct mock {\n  MOCK_METHOD(void, grow, (size_t));\n};\nVISIT_TYPE(signed char, int);\n",
		// try/catch macros, a pragma macro and a check macro with a streamed message in a body
		"void f() {\n  FMT_TRY {\n    g();\n  } FMT_CATCH(...) {}\n  FMT_PRAGMA_CLANG(diagnostic push)\n  GTEST_CHECK_(x)\n      << \"message\";\n  FMT_PRAGMA_CLANG(diagnostic pop)\n}\n",
		// a conditional between a template head and its declaration; `#define X /* c */`
		"#ifndef FMT_DEPRECATED\n#  define FMT_DEPRECATED /* deprecated */\n#endif\ntemplate <typename T>\n#if FMT_CLANG_VERSION >= 307\n__attribute__((no_sanitize(\"undefined\")))\n#endif\ninline auto reserve(T it) -> T { return it; }\n",
		// declaration macros in a namespace with an attribute: its "(" opens no
		// function (extern "C" int f(...) { does), the body is still a container
		"namespace [[deprecated(\"x\")]] n {\nVISIT_TYPE(long, int);\nint g();\n}\n",
		// a ")" in a comment is no declarator an attribute macro could follow (re2's
		// pcre.h: the constructor went, leaving `= 0;`)
		"class PCRE {\n  mutable int hit_;  // Hit limit (bool)\n\n  PCRE(const PCRE&) = delete;\n};\n",
	} {
		tree, _, err := ps.Parse(grammars.CPP, []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if tree.RootNode().HasError() {
			t.Errorf("parse errors after the rewrite:\n%s\n%s", cRewrite([]byte(src), false), tree.RootNode().String())
		}
		tree.Close()
	}
}

// The C++ syntax of cppSyntaxEdits (and the initialiser-list conditional of
// unbalancedConditionals) parses without errors after the rewrite, and each snippet
// (from fmt's sources, cut down) fails without it.
func TestCPPSyntaxIdioms(t *testing.T) {
	ps := grammars.NewParsers(5 * time.Second)
	defer ps.Close()
	raw := sitter.NewParser()
	defer raw.Close()
	raw.SetLanguage(grammars.CPP.Language())
	for _, src := range []string{
		// braced default arguments, empty and not, with a trailing return type
		"void f(int x, locale_ref loc = {});\nauto g(const format_specs& s = {}, locale_ref = {}) -> int { return 1; }\n",
		"void f(int x, std::pair<int, int> p = {1, 2}) {}\n",
		// unnamed enums with a base type, at namespace scope and in a class
		"enum : ullong { is_unpacked_bit = 1ULL << 63 };\nstruct A {\n  enum : unsigned {\n    a = 1\n  };\n};\n",
		// explicit instantiation declarations
		"extern template auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;\nextern template auto decimal_point_impl(locale_ref) -> char;\n",
		// using typename in a class
		"template <typename Allocator> struct mock : Allocator {\n  using typename Allocator::value_type;\n};\n",
		// functional casts to unsigned and long
		"void set(int size) { data_ = (data_ & ~mask) | (unsigned(size) << shift); auto n = long(size); }\n",
		// C++20 module declarations and export
		"export module fmt;\nexport template <typename T> class X {};\nexport {\nint f();\n}\n",
		// deleted functions: a template, at namespace scope and in a class
		"template <typename... T> void make_format_args(const T&...) = delete;\nvoid g(int) = delete;\nstruct S {\n  template <typename T> void f(T) = delete;\n  S(const S&) = delete;\n};\n",
		// new of an array of pointers
		"void f(int n) { auto** list = new Handle*[n]; }\n",
		// a conditional inside a constructor's initialiser list
		"class Limiter {\n  Limiter(int n)\n      :\n#if !defined(NDEBUG)\n        max_(n),\n#endif\n        allowed_(n) {\n    check(n);\n  }\n};\n",
		// clang thread-safety annotation macros after declarators (leveldb)
		"class Cache {\n  bool Erase(Handle* e) EXCLUSIVE_LOCKS_REQUIRED(mutex_);\n  void Lock() EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }\n  Status Recover(VersionEdit* edit, bool* save)\n      EXCLUSIVE_LOCKS_REQUIRED(mutex_);\n  size_t usage_ GUARDED_BY(mutex_);\n  Stats stats_[kLevels] GUARDED_BY(mutex_);\n  static Status OK() { return Status(); }\n  static Status NOT_FOUND(int code);\n  std::queue<Item> queue_\n      GUARDED_BY(mutex_);\n};\nvoid f() {\n  struct S {\n    int val GUARDED_BY(mu);\n  };\n}\n",
		// a format macro of <inttypes.h> in a string concatenation
		"void f(long n) { printf(\"%-6s %8\" PRIu64 \" ops\\n\", \"x\", n); }\n",
		// explicit instantiations of class templates; pointer-to-member access
		"template class access<tag, std::filebuf, &std::filebuf::_Myfile>;\nextern template struct box<int>;\n",
		"void f() { (obj->*method)(1); auto x = obj->*field; auto z = a.*b + 1.*c; }\n",
		// a class with an export macro whose base list starts on the next line
		"class LIB_API Reporter\n    : public Interface {\n public:\n  int n;\n};\n",
		// a conditional inside an initialiser list
		"static constexpr int table[] = {\n#if FULL_CACHE\n    1, 2,\n#else\n    1,\n#endif\n    3};\nint next();\n",
	} {
		tree, rw, err := ps.Parse(grammars.CPP, []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if tree.RootNode().HasError() {
			t.Errorf("parse errors after the rewrite:\n%s\n%s", rw, tree.RootNode().String())
		}
		tree.Close()
		bare, err := raw.ParseCtx(context.Background(), nil, []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if !bare.RootNode().HasError() {
			t.Errorf("parses without the rewrite (the case is not needed):\n%s", src)
		}
		bare.Close()
	}
}

// TestCPPSyntaxEditsLinear: cppSyntaxEdits reads nested braced default arguments
// in one pass (each "{" after "=" in a parameter list was scanned ahead to its "}":
// 1.5-4.4 s for 128 KB of `(x = {`, over two minutes for 1 MB) and looks for a raw
// string's "(" only as far as a delimiter goes (it looked to the next "(" anywhere,
// quadratic in `R"` without one, though fast at this size). The bound is generous:
// the pass takes a few milliseconds.
func TestCPPSyntaxEditsLinear(t *testing.T) {
	for _, unit := range []string{"(x = {", "(x={", "f(a, b = {", "(x = {}", `R"`, `R"x`} {
		src := []byte(strings.Repeat(unit, (128<<10)/len(unit)))
		start := time.Now()
		RewriteCPP(src)
		if d := time.Since(start); d > time.Second {
			t.Errorf("%q x %d: %v", unit, len(src)/len(unit), d)
		}
	}
}

// FuzzCPPRewrite: the C++ rewrite (cRewrite, then cppSyntaxEdits) keeps the length
// and every line break where it was, and never panics.
func FuzzCPPRewrite(f *testing.F) {
	for _, s := range []string{
		"void f(int x, locale_ref loc = {}, std::pair<int, int> p = {1, 2});\n",
		"enum : ullong { a = 1 };\nextern template auto f<char>(int) -> int;\nusing typename A::b;\n",
		"void g(int) = delete;\nauto n = long(size) + unsigned(x);\nauto** l = new Handle*[n];\n",
		"export module fmt;\nexport import a;\nexport {\nint f();\n}\nexport",
		"auto s = R\"x(a\n)\" )x\"; u8R\"(\"; int n GUARDED_BY(mu);\nprintf(\"%\" PRIu64 \"\\n\", n);\n",
		"static int t[] = {\n#if A\n1,\n#else\n2,\n#endif\n};\nA::A()\n    :\n#if X\n  a_(1),\n#endif\n  b_(2) {}\n",
		"extern \"C\" int f(int a) {\n  return FOO(a);\n}\nStatus OK();\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) { checkSameShape(t, src, RewriteCPP([]byte(src))) })
}

// checkSameShape fails t unless out, a rewrite of src, has src's length and its
// line breaks ("\n" and "\r") at the same offsets.
func checkSameShape(t *testing.T, src string, out []byte) {
	t.Helper()
	if len(out) != len(src) {
		t.Fatalf("length %d, want %d", len(out), len(src))
	}
	for i := range out {
		if (out[i] == '\n') != (src[i] == '\n') || (out[i] == '\r') != (src[i] == '\r') {
			t.Fatalf("line break moved at %d: %q -> %q", i, src, out)
		}
	}
}

// TestAttributeMacroAfterCode: the attribute-macro rule (`int n GUARDED_BY(mu);`)
// looks at the code before the macro, not at a comment or directive line above it:
// a gtest test after a comment or an #if was taken for an annotation of the text
// there and blanked (its body then a bare block; leveldb's db_test.cc, fmt's
// format-test.cc).
func TestAttributeMacroAfterCode(t *testing.T) {
	for _, src := range []string{
		"}\n\n// Check that the number of files does not grow when out of space\nTEST_F(DBTest, NoSpace) {\n  f();\n}\n",
		"}\n\n#if FMT_USE_FCNTL && !defined(_WIN32)\nTEST(format_test, invalid_glibc_buffer) {\n  f();\n}\n#endif\n",
		"}\n/* see f(x) */ TEST(a_test, b) {\n  f();\n}\n",
	} {
		if got := string(RewriteCPP([]byte(src))); got != src {
			t.Errorf("RewriteCPP(%q) = %q, want it unchanged", src, got)
		}
	}
	// After a declarator, on this line or the one before, it still goes.
	for _, c := range []struct{ in, want string }{
		{"class C {\n  size_t usage_ /* (x) */ GUARDED_BY(mutex_);\n};\n", "class C {\n  size_t usage_ /* (x) */                   ;\n};\n"},
		{"class C {\n  Status R(int* e)  // (x)\n      EXCLUSIVE_LOCKS_REQUIRED(mutex_);\n};\n", "class C {\n  Status R(int* e)  // (x)\n                                      ;\n};\n"},
	} {
		if got := string(RewriteCPP([]byte(c.in))); got != c.want {
			t.Errorf("RewriteCPP(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestCPPZeroInitialisedMember: `int count_ = 0;` in a class parses as a field (the
// grammar alone reads a pure virtual function), and pure virtual functions stay
// functions.
func TestCPPZeroInitialisedMember(t *testing.T) {
	ps := grammars.NewParsers(5 * time.Second)
	defer ps.Close()
	src := "class C {\n  int count_ = 0;\n  static constexpr int k = 0 ;\n  virtual void f() const = 0;\n  virtual void g() = 0;\n  virtual int h() override = 0;\n};\n"
	tree, _, err := ps.Parse(grammars.CPP, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	var kinds []string
	body := tree.RootNode().NamedChild(0).ChildByFieldName("body")
	for i := 0; i < int(body.NamedChildCount()); i++ {
		kinds = append(kinds, body.NamedChild(i).Type())
	}
	want := []string{"field_declaration", "field_declaration", "function_definition", "function_definition", "function_definition"}
	if !slices.Equal(kinds, want) {
		t.Errorf("members parsed as %v, want %v", kinds, want)
	}
}

// TestCPPProjectMacros: project macros by kind parse without errors after the
// rewrite (hand-made snippets of each kind): noexcept and attribute macros after a
// parameter list, specifier macros between a return type and a qualified name,
// statement macros that end a block, test-framework macros heading a body, a
// specifier chosen by a conditional, a conditional continuing a list or a
// qualified name, a calling convention, and a ";" after a member function's body.
func TestCPPProjectMacros(t *testing.T) {
	ps := grammars.NewParsers(5 * time.Second)
	defer ps.Close()
	for _, src := range []string{
		"class Q {\n public:\n  Q(Q &&other) LIB_NOEXCEPT;\n  int size() const LIB_NOEXCEPT { return 0; }\n  void swap(Q &o) LIB_NOEXCEPT override;\n  Q &operator=(Q o) LIB_NOEXCEPT LIB_EXTRA;\n};\nLIB_INLINE Q::Q(Q &&other) LIB_NOEXCEPT : n_(0) {}\n",
		"template <typename M>\nvoid LIB_INLINE\nns::sink<M>::flush() {}\nstd::future<void> LIB_INLINE pool::post(int n) { return {}; }\nLIB_INLINE std::shared_ptr<logger> ns::logger::clone(std::string name) { return nullptr; }\ntemplate <typename M>\nLIB_INLINE sink<M>::sink(int mode) : mode_(mode) {}\n",
		"void f() {\n  LIB_TRY { g(); }\n  LIB_CATCH_ALL\n}\nvoid h() {LIB_TRY{ g(); }\n  LIB_LOGGER_CATCH(loc)\n}\n",
		"TEST_CASE(\"adds two numbers\", \"[math]\") {\n  REQUIRE(1 + 1 == 2);\n  SECTION(\"zero\") {\n    REQUIRE(0 == 0);\n  }\n}\nTEST_CASE(\"braces below\")\n{\n  CHECK(true);\n}\nTEST_CASE_METHOD(Fixture, \"with a fixture\", \"[f]\") {\n  CHECK(x == 1);\n}\n",
		"namespace lv {\n#if __cplusplus >= 201703L\nconstexpr\n#endif\n    static int names[] LIB_NAMES;\n}\n",
		"A::A(int t)\n    : t_(t)\n#ifndef NO_ID\n      ,\n      id_(0)\n#endif\n{\n}\nint g() {\n  return ns::\n#if V < 7\n      internal\n#else\n      detail\n#endif\n      ::count(1);\n}\n",
		// raw strings whose quotes, braces and "#" lines are no code to the rewrite
		"struct O {\n  const char *sql() { return R\"sql(\nb = ')';\n{\n#if X\n)sql\"; }\n};\nconst char *f() { return R\"x(\n)x\"; }\nint g(int a) LIB_NOEXCEPT;\n",
		"extern \"C\" __declspec(dllimport) void __stdcall Out(const wchar_t *s);\nint __cdecl *g(void);\nstruct my_type {\n  int i = 0;\n  explicit my_type(int i)\n      : i(i){};\n  int a[2] = {1, 2};\n};\n",
	} {
		tree, rw, err := ps.Parse(grammars.CPP, []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if tree.RootNode().HasError() {
			t.Errorf("parse errors after the rewrite:\n%s\n%s", rw, tree.RootNode().String())
		}
		tree.Close()
	}
}

// TestTestMacroNames: a test macro heading a body is a function named by its first
// string argument (Catch2, doctest) or its identifier arguments (gtest), never by
// the macro; other functions keep their names.
func TestTestMacroNames(t *testing.T) {
	ps := grammars.NewParsers(5 * time.Second)
	defer ps.Close()
	src := "TEST_CASE(\"adds two\", \"[math]\") {\n  CHECK(1 + 1 == 2);\n}\nTEST_F(Parser, Empty) {\n  EXPECT_TRUE(p.ok());\n}\n" +
		"TEST(format_test, enum) {}\nTEST_CASE_METHOD(Fix, \"uses \\\"fix\\\"\") {}\nint HTTP(int port) { return port; }\nint add(int a, int b) { return a + b; }\n"
	tree, _, err := ps.Parse(grammars.CPP, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	root := tree.RootNode()
	if root.HasError() {
		t.Fatalf("parse errors: %s", root.String())
	}
	var got []string
	for i := 0; i < int(root.NamedChildCount()); i++ {
		got = append(got, grammars.CPP.DefName(root.NamedChild(i), []byte(src)))
	}
	want := []string{"adds two", "Parser.Empty", "format_test.enum", `uses \"fix\"`, "HTTP", "add"}
	if !slices.Equal(got, want) {
		t.Errorf("names %q, want %q", got, want)
	}
}

// TestCProjectMacros: C project idioms by kind parse without errors after the
// rewrite (hand-made): a type of keywords as a macro argument, a macro the file
// defines as specifiers, the null directive, and (C) call statement macros that
// bring their own ";".
func TestCProjectMacros(t *testing.T) {
	ps := grammars.NewParsers(5 * time.Second)
	defer ps.Close()
	for _, spec := range []*grammars.Spec{grammars.C, grammars.CPP} {
		for _, src := range []string{
			"int sum(int n, ...) {\n  va_list ap;\n  char *s = va_arg(ap, char *);\n  long long v = va_arg(ap, long long);\n  WIDTH_TEST(\"lu\", unsigned long);\n  return (int)sizeof(int);\n}\n",
			"#if defined(_MSC_VER)\n#define my_inline __forceinline\n#else\n#define my_inline __attribute__((always_inline)) inline\n#endif\n#define my_internal static\nmy_internal my_inline\nunsigned long bits(double d) {\n  return 0;\n}\n#\n#ifndef X\n#endif\n",
		} {
			checkParses(t, ps, spec, src)
		}
	}
	checkParses(t, ps, grammars.C, "static void t(int n) {\n    check_eq(\"len\", n == 3)\n    n++;\n    check_eq(\"again\",\n             n == 4)\n    {\n        n--;\n    }\n    report()\n    check_eq(\"end\", n == 3)\n}\n")
}

// checkParses fails t when src has parse errors after spec's rewrite.
func checkParses(t *testing.T, ps *grammars.Parsers, spec *grammars.Spec, src string) {
	t.Helper()
	tree, rw, err := ps.Parse(spec, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if tree.RootNode().HasError() {
		t.Errorf("%s: parse errors after the rewrite:\n%s\n%s", spec.Name, rw, tree.RootNode().String())
	}
	tree.Close()
}

// TestUnnamedDefinitionNames: definitions that declare no identifier of their own
// are named by what they declare: a conversion operator by its type, an unnamed
// enum by its first enumerator, a declaration of a struct by the struct; a test
// macro with an empty string argument by its identifier arguments.
func TestUnnamedDefinitionNames(t *testing.T) {
	ps := grammars.NewParsers(5 * time.Second)
	defer ps.Close()
	src := "struct Box {\n  explicit operator bool() const { return ok_; }\n  struct handler {\n    int n;\n  };\n};\nenum { packed_bits = 4, max_packed = 15 };\nMATCHER(IsOK, \"\") { return arg.ok(); }\n"
	tree, _, err := ps.Parse(grammars.CPP, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	root := tree.RootNode()
	if root.HasError() {
		t.Fatalf("parse errors: %s", root.String())
	}
	var got []string
	var walk func(n *sitter.Node)
	walk = func(n *sitter.Node) {
		for i := 0; i < int(n.NamedChildCount()); i++ {
			c := n.NamedChild(i)
			switch c.Type() {
			case "function_definition", "field_declaration", "declaration", "enum_specifier":
				got = append(got, grammars.CPP.DefName(c, []byte(src)))
			}
			walk(c)
		}
	}
	walk(root)
	want := []string{"operator bool", "handler", "n", "packed_bits", "IsOK"}
	if !slices.Equal(got, want) {
		t.Errorf("names %q, want %q", got, want)
	}
}
