package symbols

import (
	"path"
	"strings"

	"github.com/repoctx/repoctx/grammars"
)

// commonNames are, per language, names so common in its standard library (and, for
// Kotlin, the JDK) that a definition found for them by bare name alone is almost
// always another thing of the same name: the scope functions, collection operations
// and infix operators of the Kotlin standard library, Python's builtins and the
// methods of its built-in types, and the members every object has. They are resolved
// only through an import or a known receiver type (see [Table.ResolveUse]).
var commonNames = map[string]map[string]bool{
	"kotlin": wordSet(`
		let run with apply also takeIf takeUnless repeat lazy require requireNotNull check
		checkNotNull error TODO println print use to until downTo step and or xor not inv
		shl shr ushr plus minus times div rem unaryMinus rangeTo compareTo equals hashCode
		toString invoke get set contains iterator next hasNext forEach forEachIndexed
		onEach map mapNotNull mapIndexed mapTo mapValues mapKeys flatMap flatten filter
		filterNot filterIsInstance filterNotNull filterKeys filterValues first firstOrNull
		last lastOrNull single singleOrNull find findLast any all none count sum sumOf
		maxOf minOf max min maxBy minBy maxByOrNull minByOrNull maxOrNull minOrNull sorted
		sortedBy sortedByDescending sortedWith sortBy sortWith reversed distinct distinctBy
		groupBy associate associateBy associateWith partition chunked windowed zip unzip
		fold reduce joinToString joinTo take takeWhile drop dropWhile indexOf lastIndexOf
		elementAt toList toMutableList toSet toMutableSet toMap toMutableMap toTypedArray
		toSortedMap toInt toLong toDouble toFloat toByte toShort toChar toBoolean
		toIntOrNull toLongOrNull toByteArray toCharArray toRegex asSequence asIterable
		listOf listOfNotNull mutableListOf setOf mutableSetOf mapOf mutableMapOf arrayOf
		emptyList emptyMap emptySet emptyArray arrayListOf hashMapOf hashSetOf
		linkedMapOf linkedSetOf sequenceOf buildList buildMap buildSet buildString
		intArrayOf byteArrayOf longArrayOf charArrayOf add addAll remove removeAll removeAt
		removeIf retainAll clear put putAll getOrPut getOrDefault getOrElse getOrNull
		isEmpty isNotEmpty isNullOrEmpty isBlank isNotBlank isNullOrBlank orEmpty ifEmpty
		size length indices lastIndex keys values entries key value substring
		substringBefore substringAfter startsWith endsWith split trim trimEnd trimStart
		trimIndent trimMargin replace lowercase uppercase capitalize padStart padEnd format
		append appendLine prepend close copy component1 component2 component3 name ordinal
		of valueOf values copyOf copyOfRange fill also sync lock synchronized launch async
		await delay runBlocking withContext coroutineScope emit collect flowOf
		assertEquals assertNotEquals assertTrue assertFalse assertNull assertNotNull
		assertSame assertFailsWith assertContentEquals assertIs fail stream read write
		flush start join wait notify javaClass kotlin java isInstance cast`),
	"python": wordSet(`
		print len str int float bool list dict set tuple range enumerate zip map filter
		sorted reversed sum min max abs any all isinstance issubclass hasattr getattr setattr
		delattr type id repr hash iter next open super object property staticmethod
		classmethod callable format round divmod pow input vars dir chr ord bytes bytearray
		frozenset slice memoryview globals locals exec eval compile breakpoint
		Exception BaseException ValueError TypeError KeyError IndexError AttributeError
		RuntimeError NotImplementedError NotImplemented StopIteration StopAsyncIteration
		OSError IOError AssertionError ImportError LookupError ArithmeticError
		ZeroDivisionError FileNotFoundError PermissionError TimeoutError Ellipsis
		append extend insert pop remove clear copy count index sort reverse keys values
		items get setdefault update add discard union intersection difference join split
		rsplit strip lstrip rstrip startswith endswith replace lower upper title format
		encode decode find rfind splitlines partition read write close readline readlines
		flush seek tell name value args kwargs
		__init__ __new__ __call__ __enter__ __exit__ __aenter__ __aexit__ __str__ __repr__
		__eq__ __ne__ __lt__ __le__ __gt__ __ge__ __hash__ __len__ __iter__ __next__
		__getitem__ __setitem__ __delitem__ __contains__ __getattr__ __setattr__
		__bool__ __post_init__ __name__ __class__ __dict__ __doc__ __all__`),
}

func wordSet(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// nameKeywords are, per language, keywords of its grammar's Keywords list that are
// soft (Kotlin's modifier keywords and its annotation use-site targets, after the
// Kotlin grammar's keyword list): the language lets them name a function, property or
// parameter (`val data`, `fun file()`), so a use of one is resolved like any name
// when the text uses it as one (see isNameUse). Kotlin's soft keywords that only
// open syntax (by, catch, constructor, finally, get, set, import, init, where) and
// the implicit lambda parameter it stay keywords.
var nameKeywords = map[string]map[string]bool{
	"kotlin": wordSet(`
		abstract actual annotation companion const crossinline data delegate dynamic enum
		expect external field file final infix inline inner internal lateinit noinline open
		operator out override param private property protected public receiver reified
		sealed setparam suspend tailrec vararg`),
}

// IsReserved reports whether word is a keyword of the language that never names a
// definition: spec's keyword (spec may be nil: none) and not one of the language's
// soft keywords that may (nameKeywords).
func IsReserved(spec *grammars.Spec, word string) bool {
	return spec != nil && spec.IsKeyword(word) && !nameKeywords[spec.Name][word]
}

// isNameUse reports whether the soft keyword at line[start:end] is used as a name:
// not after '@' (`@file:JvmName`) and not followed, on its line, by a word or an
// annotation (`data class`, `private val`, `inline fun`).
func isNameUse(line string, start, end int) bool {
	if strings.HasSuffix(strings.TrimRight(line[:start], " \t"), "@") {
		return false
	}
	rest := strings.TrimLeft(line[end:], " \t")
	return rest == "" || rest == line[end:] || !(IsIdentByte(rest[0]) || rest[0] == '@')
}

// IsCommonName reports whether name is one of the language's very common standard
// library or member names (see commonNames); lang is a grammar name.
func IsCommonName(lang, name string) bool { return commonNames[lang][name] }

// IsTestPath reports whether a slash-separated repository path is test code: a folder
// named test, tests, testing, testdata, testFixtures, spec, or a Kotlin/Gradle test
// source set (jvmTest, commonTest, androidTest, integrationTest: a folder ending in
// Test or Tests), or a file named test_*.py, *_test.py, *_tests.py, conftest.py,
// *Test.kt, *Tests.kt, *Test.java, *Tests.java.
func IsTestPath(p string) bool {
	dir, file := path.Split(p)
	for _, c := range strings.Split(strings.Trim(dir, "/"), "/") {
		switch c {
		case "test", "tests", "testing", "testdata", "testFixtures", "spec", "__tests__":
			return true
		}
		if len(c) > 4 && (strings.HasSuffix(c, "Test") || strings.HasSuffix(c, "Tests")) {
			return true
		}
	}
	stem := strings.TrimSuffix(file, path.Ext(file))
	switch {
	case file == "conftest.py",
		strings.HasPrefix(file, "test_") && strings.HasSuffix(file, ".py"),
		strings.HasSuffix(stem, "_test"), strings.HasSuffix(stem, "_tests"),
		len(stem) > 4 && (strings.HasSuffix(stem, "Test") || strings.HasSuffix(stem, "Tests")):
		return true
	}
	return false
}
