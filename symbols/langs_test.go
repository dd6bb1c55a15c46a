package symbols

import (
	"fmt"
	"strings"
	"testing"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/grammars"
)

// importString renders an import compactly: module|name|alias, "*" for a star import.
func importString(im grammars.Import) string {
	s := im.Module + "|" + im.Name + "|" + im.Alias
	if im.Star {
		s += "|*"
	}
	return s
}

// TestImportsPerLanguage: each language's import rules read its forms of import
// (plain, aliased, grouped, wildcard) and its package where it declares one.
func TestImportsPerLanguage(t *testing.T) {
	for _, c := range []struct {
		path, src, pkg string
		want           []string
	}{
		{"A.java", "package com.acme.app;\nimport java.util.List;\nimport static java.util.Map.entry;\nimport com.acme.model.*;\nclass A {}\n",
			"com.acme.app", []string{"java.util|List|", "java.util.Map|entry|", "com.acme.model|||*"}},
		{"a.ts", "import def, { foo, bar as baz } from './util';\nimport * as path from 'path';\nimport './side';\nimport fs = require('fs');\nconst { a, b: c } = require('../lib/x');\n",
			"", []string{"./util|default|def", "./util|foo|", "./util|bar|baz", "path||path", "./side||", "fs||fs", "../lib/x|a|", "../lib/x|b|c"}},
		{"a.js", "const x = require('./x');\nimport y from \"./y.js\";\n", "", []string{"./x||x", "./y.js|default|y"}},
		{"a.tsx", "import React, { useState } from 'react';\n", "", []string{"react|default|React", "react|useState|"}},
		{"a.go", "package main\n\nimport (\n\t\"fmt\"\n\tstr \"strings\"\n\t. \"github.com/a/b/pkg\"\n\t_ \"embed\"\n)\nimport \"os\"\n",
			"", []string{"fmt||", "strings||str", "github.com/a/b/pkg|||*", "embed||", "os||"}},
		{"a.rs", "use std::collections::HashMap;\nuse crate::model::{Issue, Label as L, self};\nuse super::util::*;\nmod m { use crate::x::Y; }\n",
			"", []string{"std/collections|HashMap|", "model|Issue|", "model|Label|L", "model||", "util|||*", "x|Y|"}},
		{"a.c", "#include <stdio.h>\n#include \"util/foo.h\"\n#ifdef X\n#include \"bar.h\"\n#endif\n", "", []string{"stdio.h|||*", "util/foo.h|||*", "bar.h|||*"}},
		{"a.cpp", "#include <vector>\nextern \"C\" {\n#include \"c.h\"\n}\n", "", []string{"vector|||*", "c.h|||*"}},
		{"A.cs", "using System;\nusing Json = Newtonsoft.Json;\nusing static System.Math;\nnamespace Acme.App;\nclass A {}\n",
			"Acme.App", []string{"System|||*", "Newtonsoft|Json|Json", "System.Math|||*"}},
		{"B.cs", "namespace Acme.Other\n{\n    using Acme.Models;\n    class B {}\n}\n", "Acme.Other", []string{"Acme.Models|||*"}},
		{"a.rb", "require 'json'\nrequire_relative '../lib/foo'\nrequire_relative 'bar'\n", "", []string{"json|||*", "../lib/foo|||*", "./bar|||*"}},
		{"a.php", "<?php\nnamespace App\\Http;\nuse Illuminate\\Support\\Str;\nuse App\\Models\\{User, Team as T};\nuse App\\Models\\Post as P;\nuse function App\\helpers\\fmt;\n",
			"App.Http", []string{"Illuminate.Support|Str|", "App.Models|User|", "App.Models|Team|T", "App.Models|Post|P", "App.helpers|fmt|"}},
		{"a.swift", "import Foundation\n@testable import MyKit\n", "", []string{"Foundation|||*", "MyKit|||*"}},
		{"a.scala", "package com.acme\npackage app\nimport scala.collection.mutable\nimport com.acme.util.{Foo, Bar => B}\nimport com.acme.other._\n",
			"com.acme.app", []string{"scala.collection|mutable|", "com.acme.util|Foo|", "com.acme.util|Bar|B", "com.acme.other|||*"}},
	} {
		t.Run(c.path, func(t *testing.T) {
			f, err := chunker.Decode(c.path, []byte(c.src), 0)
			if err != nil {
				t.Fatal(err)
			}
			e := NewExtractor(0)
			defer e.Close()
			sf, err := e.Extract(f)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, im := range sf.Imports {
				got = append(got, importString(im))
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") || sf.Package != c.pkg {
				t.Errorf("%s: package %q, imports\n  %s\nwant package %q,\n  %s", f.Lang, sf.Package, strings.Join(got, "\n  "), c.pkg, strings.Join(c.want, "\n  "))
			}
		})
	}
}

// TestResolvePerLanguage: a name used in one file resolves through that file's
// imports to its definition in another file, for each language whose imports name
// packages or paths (Kotlin through a Java file too: one family, one table).
func TestResolvePerLanguage(t *testing.T) {
	for _, c := range []struct {
		files      map[string]string
		from, name string
		wantPath   string
		wantVia    string
	}{
		{map[string]string{
			"src/com/acme/model/Issue.java": "package com.acme.model;\n\npublic class Issue {\n    int id;\n}\n",
			"src/com/acme/app/App.java":     "package com.acme.app;\n\nimport com.acme.model.Issue;\n\nclass App {}\n",
			"other/Issue.java":              "package other;\nclass Issue {}\n",
		}, "src/com/acme/app/App.java", "Issue", "src/com/acme/model/Issue.java", "import"},
		{map[string]string{
			"src/com/acme/Issue.java": "package com.acme;\n\npublic class Issue {}\n",
			"src/App.kt":              "package app\n\nimport com.acme.Issue\n\nfun main() {}\n",
			"z/Issue.kt":              "package z\nclass Issue\n",
		}, "src/App.kt", "Issue", "src/com/acme/Issue.java", "import"},
		{map[string]string{
			"src/util.ts":         "export function foo(a: number): number {\n  return a;\n}\n",
			"src/app/main.ts":     "import { foo } from '../util';\n\nfoo(1);\n",
			"src/app/foo/util.ts": "export function foo() {}\n",
		}, "src/app/main.ts", "foo", "src/util.ts", "import"},
		{map[string]string{
			"src/components/Button/index.tsx": "export function Button() { return null; }\n",
			"src/pages/home.tsx":              "import { Button } from '@/components/Button';\n",
		}, "src/pages/home.tsx", "Button", "src/components/Button/index.tsx", "import"},
		{map[string]string{
			"pkg/util/u.go": "package util\n\nfunc Helper() int { return 1 }\n",
			"cmd/main.go":   "package main\n\nimport . \"github.com/x/y/pkg/util\"\n\nfunc main() { Helper() }\n",
			"z/h.go":        "package z\n\nfunc Helper() {}\n",
		}, "cmd/main.go", "Helper", "pkg/util/u.go", "star-import"},
		{map[string]string{
			"src/model.rs": "pub struct Issue {\n    id: u32,\n}\n",
			"src/main.rs":  "use crate::model::Issue;\n\nfn main() {}\n",
			"src/a.rs":     "struct Issue;\n",
		}, "src/main.rs", "Issue", "src/model.rs", "import"},
		{map[string]string{
			"include/util.h": "#ifndef UTIL_H\n#define UTIL_H\nint sum(int a, int b);\n#endif\n",
			"src/main.c":     "#include \"util.h\"\n\nint main(void) { return sum(1, 2); }\n",
			"src/other.c":    "static int sum(int a, int b) { return 0; }\n",
		}, "src/main.c", "sum", "include/util.h", "star-import"},
		{map[string]string{
			"Models/Issue.cs": "namespace Acme.Models;\n\npublic class Issue { }\n",
			"App.cs":          "using Acme.Models;\n\nclass App { }\n",
			"Z/Issue.cs":      "namespace Z { class Issue { } }\n",
		}, "App.cs", "Issue", "Models/Issue.cs", "star-import"},
		{map[string]string{
			"src/Models/User.php": "<?php\nnamespace App\\Models;\n\nclass User {}\n",
			"src/App.php":         "<?php\nnamespace App;\n\nuse App\\Models\\User;\n",
			"src/Z/User.php":      "<?php\nnamespace Z;\nclass User {}\n",
		}, "src/App.php", "User", "src/Models/User.php", "import"},
		{map[string]string{
			"lib/acme/foo.rb": "class Foo\n  def bar; end\nend\n",
			"app.rb":          "require 'acme/foo'\n\nFoo.new\n",
			"z/foo.rb":        "class Foo; end\n",
		}, "app.rb", "Foo", "lib/acme/foo.rb", "star-import"},
		{map[string]string{
			"src/com/acme/Util.scala": "package com.acme\n\nobject Util {\n  def f = 1\n}\n",
			"src/App.scala":           "package app\n\nimport com.acme.Util\n",
			"z/Util.scala":            "package z\nobject Util\n",
		}, "src/App.scala", "Util", "src/com/acme/Util.scala", "import"},
	} {
		t.Run(fmt.Sprintf("%s:%s", c.from, c.name), func(t *testing.T) {
			tab := extractAll(t, c.files)
			got := tab.Resolve(c.name, c.from, nil, 1)
			if len(got) != 1 || got[0].Def.Path != c.wantPath || got[0].Via != c.wantVia {
				var s []string
				for _, g := range got {
					s = append(s, g.Def.Path+" via "+g.Via)
				}
				t.Errorf("Resolve(%s) from %s = %v, want %s via %s", c.name, c.from, s, c.wantPath, c.wantVia)
			}
		})
	}
}

// TestResolveKeepFilters: definitions Site.Keep rejects do not count toward max.
func TestResolveKeepFilters(t *testing.T) {
	tab := extractAll(t, map[string]string{
		"b/B.kt":   "package b\nclass Issue\n",
		"b/C.java": "package b;\nclass Issue {}\n",
		"b/X.kt":   "package b\nfun use() = Issue()\n",
		"c/C.py":   "class Issue:\n    pass\n",
	})
	keep := func(d *Def) bool { return strings.HasSuffix(d.Path, ".java") }
	got := tab.ResolveUse(Use{Name: "Issue", Bare: true}, Site{From: "b/X.kt", Keep: keep}, 1)
	if len(got) != 1 || got[0].Def.Path != "b/C.java" {
		t.Errorf("ResolveUse = %v, want b/C.java only (b/B.kt comes first without Keep)", got)
	}
	if got := tab.ResolveUse(Use{Name: "Issue", Bare: true}, Site{From: "b/X.kt"}, 1); len(got) != 1 || got[0].Def.Path != "b/B.kt" {
		t.Errorf("ResolveUse without Keep = %v, want b/B.kt (same folder, first by path)", got)
	}
}

// TestResolveModuleRules: the module rules of each language beyond a plain import
// (re-exports, whole-module qualifiers, crate roots, module-qualified Swift, C/C++
// definitions of declared functions, static wildcard imports, names written with
// their package, aliased classes), each with a decoy of the same name elsewhere.
func TestResolveModuleRules(t *testing.T) {
	for _, c := range []struct {
		name  string
		files map[string]string
		from  string
		use   Use
		want  []string // "path via", in order
	}{
		{"js re-export by name through an index file", map[string]string{
			"src/lib/money.js": "export function parseAmount(s) { return 1; }\n",
			"src/lib/index.js": "export { parseAmount } from './money.js';\n",
			"src/app.js":       "import { parseAmount } from './lib';\n",
			"src/z/money.js":   "export function parseAmount() {}\n",
		}, "src/app.js", Use{Name: "parseAmount", Bare: true}, []string{"src/lib/money.js import"}},
		{"ts re-export, renamed, through export *", map[string]string{
			"src/lib/money.ts": "export function parseAmount(s: string): number { return 1; }\n",
			"src/lib/all.ts":   "export { parseAmount as cents } from './money';\n",
			"src/lib/index.ts": "export * from './all';\n",
			"src/app.ts":       "import { cents } from './lib';\n",
		}, "src/app.ts", Use{Name: "cents", Bare: true}, []string{"src/lib/money.ts import"}},
		{"js namespace import as a qualifier", map[string]string{
			"src/money.js":   "export function parseAmount(s) { return 1; }\n",
			"src/app.js":     "import * as money from './money.js';\n",
			"src/z/money.js": "export function parseAmount() {}\n",
		}, "src/app.js", Use{Name: "parseAmount", Qualifiers: []string{"money"}}, []string{"src/money.js module"}},
		{"rust crate root re-export", map[string]string{
			"src/lib.rs":   "pub mod money;\npub use money::parse_amount;\n",
			"src/money.rs": "pub fn parse_amount(s: &str) -> u32 { 1 }\n",
			"src/other.rs": "use crate::parse_amount;\n",
			"src/z.rs":     "fn parse_amount() {}\n",
		}, "src/other.rs", Use{Name: "parse_amount", Bare: true}, []string{"src/money.rs import"}},
		{"rust module path qualifier", map[string]string{
			"src/lib.rs":   "pub mod money;\n",
			"src/money.rs": "pub fn parse_amount(s: &str) -> u32 { 1 }\n",
			"src/other.rs": "fn f() {}\n",
			"src/z.rs":     "fn parse_amount() {}\n",
		}, "src/other.rs", Use{Name: "parse_amount", Qualifiers: []string{"money"}}, []string{"src/money.rs module"}},
		{"rust std module path, not the crate's file of that name", map[string]string{
			"src/lib.rs":  "pub mod util;\n",
			"src/util.rs": "pub fn swap() {}\n",
			"src/mem.rs":  "pub fn swap() {}\n",
			"src/a.rs":    "fn f() {}\n",
		}, "src/a.rs", Use{Name: "swap", Qualifiers: []string{"mem"}}, nil},
		{"swift module qualifier", map[string]string{
			"Sources/ShopKit/Money.swift": "public func parseAmount(_ s: String) -> Int { 1 }\n",
			"Sources/App/main.swift":      "import ShopKit\n",
			"Sources/Other/Money.swift":   "func parseAmount(_ s: String) -> Int { 0 }\n",
		}, "Sources/App/main.swift", Use{Name: "parseAmount", Qualifiers: []string{"ShopKit"}}, []string{"Sources/ShopKit/Money.swift module"}},
		{"c++ declaration, then its definition", map[string]string{
			"include/shop/money.h": "namespace shop {\nint parse_amount(const char* s);\n}\n",
			"src/money.cc":         "#include \"shop/money.h\"\nnamespace shop {\nint parse_amount(const char* s) { return 1; }\n}\n",
			"src/main.cc":          "#include \"shop/money.h\"\n",
			"other/parse.cc":       "double parse_amount(const char* s) { return 0; }\n",
		}, "src/main.cc", Use{Name: "parse_amount", Bare: true}, []string{"include/shop/money.h star-import", "src/money.cc star-import"}},
		{"c# using static", map[string]string{
			"Util/Money.cs":  "namespace Acme.Util;\npublic static class Money { public static int ParseAmount(string s) => 1; }\n",
			"App.cs":         "using static Acme.Util.Money;\nclass App { }\n",
			"Other/Money.cs": "namespace Other;\npublic static class Money { public static int ParseAmount(string s) => 0; }\n",
		}, "App.cs", Use{Name: "ParseAmount", Bare: true}, []string{"Util/Money.cs star-import"}},
		{"java class written with its package", map[string]string{
			"a/util/Money.java": "package com.acme.util;\npublic class Money { public static int parseAmount(String s) { return 1; } }\n",
			"a/App.java":        "package com.acme;\nclass App {}\n",
			"z/Money.java":      "package z;\npublic class Money { public static int parseAmount(String s) { return 0; } }\n",
		}, "a/App.java", Use{Name: "parseAmount", Qualifiers: []string{"com.acme.util.Money"}}, []string{"a/util/Money.java receiver"}},
		{"scala aliased import of an object", map[string]string{
			"a/Money.scala": "package com.acme.util\nobject Money { def parseAmount(s: String): Int = 1 }\n",
			"a/App.scala":   "package com.acme\nimport com.acme.util.{Money => M}\nobject App\n",
			"z/Money.scala": "package z\nobject Money { def parseAmount(s: String): Int = 0 }\n",
		}, "a/App.scala", Use{Name: "parseAmount", Qualifiers: []string{"M"}}, []string{"a/Money.scala receiver"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tab := extractAll(t, c.files)
			var got []string
			for _, g := range tab.ResolveUse(c.use, Site{From: c.from}, 2) {
				got = append(got, g.Def.Path+" "+g.Via)
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("ResolveUse(%+v) from %s = %q, want %q", c.use, c.from, got, c.want)
			}
		})
	}
}

// TestPHPNamespaceQualifier: a class written with its PHP namespace is one receiver
// chain, which resolves through the namespace's files.
func TestPHPNamespaceQualifier(t *testing.T) {
	uses := Uses("<?php\nreturn \\App\\Util\\Money::parseAmount(", "", grammars.Lookup("php"))
	var q []string
	for _, u := range uses {
		if u.Name == "parseAmount" {
			q = u.Qualifiers
		}
	}
	if len(q) != 1 || q[0] != "App.Util.Money" {
		t.Fatalf("qualifiers of parseAmount %q, want [App.Util.Money]", q)
	}
	tab := extractAll(t, map[string]string{
		"src/Util/Money.php":  "<?php\nnamespace App\\Util;\nclass Money { public static function parseAmount(string $s): int { return 1; } }\n",
		"src/Other/Money.php": "<?php\nnamespace App\\Other;\nclass Money { public static function parseAmount(string $s): int { return 0; } }\n",
		"src/App.php":         "<?php\nnamespace App;\n",
	})
	got := tab.ResolveUse(Use{Name: "parseAmount", Qualifiers: q}, Site{From: "src/App.php"}, 2)
	if len(got) != 1 || got[0].Def.Path != "src/Util/Money.php" {
		t.Errorf("ResolveUse = %v, want src/Util/Money.php's", got)
	}
}

// TestKotlinSoftKeywordNames: Kotlin's soft keywords name definitions (`val data`,
// `fun file()`) and resolve like any name where the text uses them as names, and are
// no uses where it uses them as keywords (`data class`, `@file:JvmName`).
func TestKotlinSoftKeywordNames(t *testing.T) {
	spec := grammars.Lookup("kotlin")
	before := "@file:JvmName(\"Report\")\npackage a\n\nprivate data class Row(val n: Int)\n\nfun report(): Int = data.size + file(\"x\").length + payload.size + path("
	names := map[string]bool{}
	for _, u := range Uses(before, ")\n", spec) {
		names[u.Name] = true
	}
	for _, n := range []string{"data", "file", "payload", "path"} {
		if !names[n] {
			t.Errorf("Uses left out %q", n)
		}
	}
	for _, n := range []string{"private", "class", "val", "fun"} {
		if names[n] {
			t.Errorf("Uses has the keyword %q", n)
		}
	}
	tab := extractAll(t, map[string]string{
		"a/Defs.kt":   "package a\n\nval data: List<Int> = listOf()\n\nfun file(name: String): String = name\n\nval payload: List<Int> = listOf()\n\nfun path(name: String): String = name\n",
		"a/Report.kt": "package a\n\nfun report(): Int = 0\n",
		"b/Defs.kt":   "package b\n\nval data = 1\nfun file() = 2\nval payload = 3\nfun path() = 4\n",
	})
	for _, n := range []string{"data", "file", "payload", "path"} {
		got := tab.ResolveUse(Use{Name: n, Bare: true}, Site{From: "a/Report.kt"}, 2)
		if len(got) != 1 || got[0].Def.Path != "a/Defs.kt" || got[0].Via != ViaSamePkg {
			t.Errorf("ResolveUse(%s) = %v, want a/Defs.kt via same-package", n, got)
		}
	}
}
