package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/index"
	"github.com/repoctx/repoctx/internal/racetest"
	"github.com/repoctx/repoctx/serve"
)

// Use kinds of the definitions table (its columns), in order.
const (
	useImport    = "import"       // the language's import form names the definition or what holds it
	useAlias     = "alias"        // the same, renamed by the import
	useWildcard  = "wildcard"     // an import of a whole package or module (`*`, `_`, `using static`, `import * as`)
	useSamePkg   = "same package" // a file of the same package, namespace, module or folder
	useQualified = "qualified"    // a path written at the use, no import of it (`crate::m::f`, `ns::f`, `a.b.f`)
	useReExport  = "re-export"    // through a module that re-exports it (index files, `pub use`, `__init__.py`)
	useDeclared  = "declared"     // a declaration in a header: the definition's own file
)

var useKinds = []string{useImport, useAlias, useWildcard, useSamePkg, useQualified, useReExport, useDeclared}

// defUse is one use of a definition in a module of defModules: the hole's file and
// the text before the cursor, and the files whose "def:name" part answers it.
type defUse struct {
	kind, from, prefix, name string
	// as is the name the use writes (an alias), "" for name.
	as   string
	want []string
}

// defModule is a small module in one language: a defining file (def), files using
// its definitions in the language's own ways, and a decoy: a definition of the same
// name in another package, which must never be the answer.
type defModule struct {
	lang  string
	files map[string]string
	def   string
	decoy string // the decoy's folder prefix
	uses  []defUse
}

// defModules are the modules of TestDefinitionsPerLanguage, one per language.
var defModules = []defModule{
	{lang: "go", def: "util/money.go", decoy: "other/", files: map[string]string{
		"go.mod":         "module example.com/shop\n\ngo 1.22\n",
		"util/money.go":  "package util\n\nimport \"strconv\"\n\n// ParseAmount reads an amount in cents.\nfunc ParseAmount(s string) int {\n\tn, _ := strconv.Atoi(s)\n\treturn n * 100\n}\n",
		"util/report.go": "package util\n\nfunc Total(xs []string) int {\n\treturn len(xs)\n}\n",
		"main.go":        "package main\n\nfunc main() {}\n",
		"other/parse.go": "package other\n\nfunc ParseAmount(s string) float64 {\n\treturn 0\n}\n",
	}, uses: []defUse{
		{kind: useImport, from: "main.go", name: "ParseAmount", prefix: "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/shop/util\"\n)\n\nfunc main() {\n\tfmt.Println(util.ParseAmount("},
		{kind: useAlias, from: "main.go", name: "ParseAmount", prefix: "package main\n\nimport u \"example.com/shop/util\"\n\nfunc main() {\n\tprintln(u.ParseAmount("},
		{kind: useWildcard, from: "main.go", name: "ParseAmount", prefix: "package main\n\nimport . \"example.com/shop/util\"\n\nfunc main() {\n\tprintln(ParseAmount("},
		{kind: useSamePkg, from: "util/report.go", name: "ParseAmount", prefix: "package util\n\nfunc Total(xs []string) int {\n\tt := 0\n\tfor _, x := range xs {\n\t\tt += ParseAmount("},
	}},
	{lang: "java", def: "src/main/java/com/acme/shop/util/Money.java", decoy: "src/main/java/com/acme/other/", files: map[string]string{
		"src/main/java/com/acme/shop/util/Money.java":  "package com.acme.shop.util;\n\npublic final class Money {\n    /** Reads an amount in cents. */\n    public static int parseAmount(String s) {\n        return Integer.parseInt(s) * 100;\n    }\n}\n",
		"src/main/java/com/acme/shop/util/Report.java": "package com.acme.shop.util;\n\nclass Report {\n}\n",
		"src/main/java/com/acme/shop/App.java":         "package com.acme.shop;\n\nclass App {\n}\n",
		"src/main/java/com/acme/other/Money.java":      "package com.acme.other;\n\npublic final class Money {\n    public static double parseAmount(String s) {\n        return 0;\n    }\n}\n",
	}, uses: []defUse{
		{kind: useImport, from: "src/main/java/com/acme/shop/App.java", name: "parseAmount", prefix: "package com.acme.shop;\n\nimport com.acme.shop.util.Money;\n\nclass App {\n    int run() {\n        return Money.parseAmount("},
		{kind: useImport, from: "src/main/java/com/acme/shop/App.java", name: "parseAmount", prefix: "package com.acme.shop;\n\nimport static com.acme.shop.util.Money.parseAmount;\n\nclass App {\n    int run() {\n        return parseAmount("},
		{kind: useWildcard, from: "src/main/java/com/acme/shop/App.java", name: "parseAmount", prefix: "package com.acme.shop;\n\nimport com.acme.shop.util.*;\n\nclass App {\n    int run() {\n        return Money.parseAmount("},
		{kind: useSamePkg, from: "src/main/java/com/acme/shop/util/Report.java", name: "parseAmount", prefix: "package com.acme.shop.util;\n\nclass Report {\n    int total() {\n        return Money.parseAmount("},
		{kind: useQualified, from: "src/main/java/com/acme/shop/App.java", name: "parseAmount", prefix: "package com.acme.shop;\n\nclass App {\n    int run() {\n        return com.acme.shop.util.Money.parseAmount("},
	}},
	{lang: "kotlin", def: "src/main/kotlin/com/acme/shop/util/Money.kt", decoy: "src/main/kotlin/com/acme/other/", files: map[string]string{
		"src/main/kotlin/com/acme/shop/util/Money.kt":  "package com.acme.shop.util\n\n/** Reads an amount in cents. */\nfun parseAmount(s: String): Int = s.toInt() * 100\n\nval data: List<Int> = listOf(1, 2)\n\nfun file(name: String): String = \"/tmp/\" + name\n",
		"src/main/kotlin/com/acme/shop/util/Report.kt": "package com.acme.shop.util\n\nfun total(xs: List<String>): Int = xs.size\n",
		"src/main/kotlin/com/acme/shop/App.kt":         "package com.acme.shop\n\nfun main() {}\n",
		"src/main/kotlin/com/acme/other/Parse.kt":      "package com.acme.other\n\nfun parseAmount(s: String): Double = 0.0\n\nval data: List<Int> = listOf()\n\nfun file(name: String): String = name\n",
	}, uses: []defUse{
		{kind: useImport, from: "src/main/kotlin/com/acme/shop/App.kt", name: "parseAmount", prefix: "package com.acme.shop\n\nimport com.acme.shop.util.parseAmount\n\nfun main() {\n    println(parseAmount("},
		{kind: useImport, from: "src/main/kotlin/com/acme/shop/App.kt", name: "data", prefix: "package com.acme.shop\n\nimport com.acme.shop.util.data\n\nfun main() {\n    println(data.size + "},
		{kind: useAlias, as: "parse", from: "src/main/kotlin/com/acme/shop/App.kt", name: "parseAmount", prefix: "package com.acme.shop\n\nimport com.acme.shop.util.parseAmount as parse\n\nfun main() {\n    println(parse("},
		{kind: useWildcard, from: "src/main/kotlin/com/acme/shop/App.kt", name: "parseAmount", prefix: "package com.acme.shop\n\nimport com.acme.shop.util.*\n\nfun main() {\n    println(parseAmount("},
		{kind: useSamePkg, from: "src/main/kotlin/com/acme/shop/util/Report.kt", name: "parseAmount", prefix: "package com.acme.shop.util\n\nfun total(xs: List<String>): Int = xs.sumOf { parseAmount("},
		{kind: useSamePkg, from: "src/main/kotlin/com/acme/shop/util/Report.kt", name: "data", prefix: "package com.acme.shop.util\n\nfun total(xs: List<String>): Int = data.sum() + "},
		{kind: useSamePkg, from: "src/main/kotlin/com/acme/shop/util/Report.kt", name: "file", prefix: "package com.acme.shop.util\n\nfun report(): String = file("},
	}},
	{lang: "scala", def: "src/main/scala/com/acme/shop/util/Money.scala", decoy: "src/main/scala/com/acme/other/", files: map[string]string{
		"src/main/scala/com/acme/shop/util/Money.scala":  "package com.acme.shop.util\n\nobject Money {\n  /** Reads an amount in cents. */\n  def parseAmount(s: String): Int = s.toInt * 100\n}\n",
		"src/main/scala/com/acme/shop/util/Report.scala": "package com.acme.shop.util\n\nobject Report {\n  def total(xs: Seq[String]): Int = xs.size\n}\n",
		"src/main/scala/com/acme/shop/App.scala":         "package com.acme.shop\n\nobject App\n",
		"src/main/scala/com/acme/other/Money.scala":      "package com.acme.other\n\nobject Money {\n  def parseAmount(s: String): Double = 0.0\n}\n",
	}, uses: []defUse{
		{kind: useImport, from: "src/main/scala/com/acme/shop/App.scala", name: "parseAmount", prefix: "package com.acme.shop\n\nimport com.acme.shop.util.Money\n\nobject App {\n  def run(): Int = Money.parseAmount("},
		{kind: useAlias, from: "src/main/scala/com/acme/shop/App.scala", name: "parseAmount", prefix: "package com.acme.shop\n\nimport com.acme.shop.util.{Money => M}\n\nobject App {\n  def run(): Int = M.parseAmount("},
		{kind: useWildcard, from: "src/main/scala/com/acme/shop/App.scala", name: "parseAmount", prefix: "package com.acme.shop\n\nimport com.acme.shop.util._\n\nobject App {\n  def run(): Int = Money.parseAmount("},
		{kind: useSamePkg, from: "src/main/scala/com/acme/shop/util/Report.scala", name: "parseAmount", prefix: "package com.acme.shop.util\n\nobject Report {\n  def total(xs: Seq[String]): Int = xs.map(Money.parseAmount("},
	}},
	{lang: "csharp", def: "Util/Money.cs", decoy: "Other/", files: map[string]string{
		"Util/Money.cs":  "namespace Acme.Shop.Util;\n\npublic static class Money\n{\n    /// <summary>Reads an amount in cents.</summary>\n    public static int ParseAmount(string s) => int.Parse(s) * 100;\n}\n",
		"Util/Report.cs": "namespace Acme.Shop.Util;\n\npublic static class Report\n{\n}\n",
		"App.cs":         "namespace Acme.Shop;\n\npublic class App\n{\n}\n",
		"Other/Money.cs": "namespace Acme.Other\n{\n    public static class Money\n    {\n        public static double ParseAmount(string s) => 0;\n    }\n}\n",
	}, uses: []defUse{
		{kind: useImport, from: "App.cs", name: "ParseAmount", prefix: "using Acme.Shop.Util;\n\nnamespace Acme.Shop;\n\npublic class App\n{\n    public int Run() => Money.ParseAmount("},
		{kind: useAlias, from: "App.cs", name: "ParseAmount", prefix: "using M = Acme.Shop.Util.Money;\n\nnamespace Acme.Shop;\n\npublic class App\n{\n    public int Run() => M.ParseAmount("},
		{kind: useWildcard, from: "App.cs", name: "ParseAmount", prefix: "using static Acme.Shop.Util.Money;\n\nnamespace Acme.Shop;\n\npublic class App\n{\n    public int Run() => ParseAmount("},
		{kind: useSamePkg, from: "Util/Report.cs", name: "ParseAmount", prefix: "namespace Acme.Shop.Util;\n\npublic static class Report\n{\n    public static int Total(string s) => Money.ParseAmount("},
		{kind: useQualified, from: "App.cs", name: "ParseAmount", prefix: "namespace Acme.Shop;\n\npublic class App\n{\n    public int Run() => Acme.Shop.Util.Money.ParseAmount("},
	}},
	{lang: "php", def: "src/Util/Money.php", decoy: "src/Other/", files: map[string]string{
		"src/Util/Money.php":      "<?php\nnamespace App\\Util;\n\nclass Money\n{\n    /** Reads an amount in cents. */\n    public static function parseAmount(string $s): int\n    {\n        return (int) $s * 100;\n    }\n}\n",
		"src/Util/Report.php":     "<?php\nnamespace App\\Util;\n\nclass Report\n{\n}\n",
		"src/Http/Controller.php": "<?php\nnamespace App\\Http;\n\nclass Controller\n{\n}\n",
		"src/Other/Money.php":     "<?php\nnamespace App\\Other;\n\nclass Money\n{\n    public static function parseAmount(string $s): float\n    {\n        return 0.0;\n    }\n}\n",
	}, uses: []defUse{
		{kind: useImport, from: "src/Http/Controller.php", name: "parseAmount", prefix: "<?php\nnamespace App\\Http;\n\nuse App\\Util\\Money;\n\nclass Controller\n{\n    public function run(): int\n    {\n        return Money::parseAmount("},
		{kind: useAlias, from: "src/Http/Controller.php", name: "parseAmount", prefix: "<?php\nnamespace App\\Http;\n\nuse App\\Util\\Money as M;\n\nclass Controller\n{\n    public function run(): int\n    {\n        return M::parseAmount("},
		{kind: useSamePkg, from: "src/Util/Report.php", name: "parseAmount", prefix: "<?php\nnamespace App\\Util;\n\nclass Report\n{\n    public function total(): int\n    {\n        return Money::parseAmount("},
		{kind: useQualified, from: "src/Http/Controller.php", name: "parseAmount", prefix: "<?php\nnamespace App\\Http;\n\nclass Controller\n{\n    public function run(): int\n    {\n        return \\App\\Util\\Money::parseAmount("},
	}},
	{lang: "ruby", def: "lib/shop/money.rb", decoy: "lib/other/", files: map[string]string{
		"lib/shop/money.rb":  "module Shop\n  module Money\n    # Reads an amount in cents.\n    def self.parse_amount(s)\n      s.to_i * 100\n    end\n  end\nend\n",
		"lib/shop/report.rb": "module Shop\n  class Report\n  end\nend\n",
		"app.rb":             "puts 1\n",
		"lib/other/money.rb": "module Other\n  module Money\n    def self.parse_amount(s)\n      0.0\n    end\n  end\nend\n",
	}, uses: []defUse{
		{kind: useImport, from: "app.rb", name: "parse_amount", prefix: "require 'shop/money'\n\nputs Shop::Money.parse_amount("},
		{kind: useImport, from: "lib/shop/report.rb", name: "parse_amount", prefix: "require_relative 'money'\n\nmodule Shop\n  class Report\n    def total(xs)\n      xs.sum { |x| Money.parse_amount("},
		{kind: useSamePkg, from: "lib/shop/report.rb", name: "parse_amount", prefix: "module Shop\n  class Report\n    def total(xs)\n      xs.sum { |x| Money.parse_amount("},
	}},
	{lang: "python", def: "shop/money.py", decoy: "other/", files: map[string]string{
		"shop/__init__.py":  "from .money import parse_amount\n",
		"shop/money.py":     "def parse_amount(s: str) -> int:\n    \"\"\"Reads an amount in cents.\"\"\"\n    return int(s) * 100\n",
		"shop/report.py":    "def total(xs):\n    return len(xs)\n",
		"app.py":            "print(1)\n",
		"other/__init__.py": "",
		"other/money.py":    "def parse_amount(s: str) -> float:\n    return 0.0\n",
	}, uses: []defUse{
		{kind: useImport, from: "app.py", name: "parse_amount", prefix: "from shop.money import parse_amount\n\nprint(parse_amount("},
		{kind: useAlias, as: "pa", from: "app.py", name: "parse_amount", prefix: "from shop.money import parse_amount as pa\n\nprint(pa("},
		{kind: useWildcard, from: "app.py", name: "parse_amount", prefix: "from shop.money import *\n\nprint(parse_amount("},
		{kind: useSamePkg, from: "shop/report.py", name: "parse_amount", prefix: "from .money import parse_amount\n\n\ndef total(xs):\n    return sum(parse_amount("},
		{kind: useQualified, from: "app.py", name: "parse_amount", prefix: "import shop.money\n\nprint(shop.money.parse_amount("},
		{kind: useQualified, from: "app.py", name: "parse_amount", prefix: "from shop import money\n\nprint(money.parse_amount("},
		{kind: useReExport, from: "app.py", name: "parse_amount", prefix: "from shop import parse_amount\n\nprint(parse_amount("},
	}},
	{lang: "javascript", def: "src/lib/money.js", decoy: "src/other/", files: map[string]string{
		"src/lib/money.js":   "/** Reads an amount in cents. */\nexport function parseAmount(s) {\n  return Number(s) * 100;\n}\n",
		"src/lib/index.js":   "export { parseAmount } from './money.js';\n",
		"src/lib/report.js":  "export function total(xs) {\n  return xs.length;\n}\n",
		"src/app.js":         "console.log(1);\n",
		"src/other/money.js": "export function parseAmount(s) {\n  return 0;\n}\n",
	}, uses: []defUse{
		{kind: useImport, from: "src/app.js", name: "parseAmount", prefix: "import { parseAmount } from './lib/money.js';\n\nconsole.log(parseAmount("},
		{kind: useImport, from: "src/app.js", name: "parseAmount", prefix: "const { parseAmount } = require('./lib/money');\n\nconsole.log(parseAmount("},
		{kind: useAlias, as: "pa", from: "src/app.js", name: "parseAmount", prefix: "import { parseAmount as pa } from './lib/money.js';\n\nconsole.log(pa("},
		{kind: useWildcard, from: "src/app.js", name: "parseAmount", prefix: "import * as money from './lib/money.js';\n\nconsole.log(money.parseAmount("},
		{kind: useSamePkg, from: "src/lib/report.js", name: "parseAmount", prefix: "import { parseAmount } from './money.js';\n\nexport function total(xs) {\n  return xs.map((x) => parseAmount("},
		{kind: useReExport, from: "src/app.js", name: "parseAmount", prefix: "import { parseAmount } from './lib';\n\nconsole.log(parseAmount("},
	}},
	{lang: "typescript", def: "src/lib/money.ts", decoy: "src/other/", files: map[string]string{
		"src/lib/money.ts":   "/** Reads an amount in cents. */\nexport function parseAmount(s: string): number {\n  return Number(s) * 100;\n}\n",
		"src/lib/index.ts":   "export * from './money';\n",
		"src/lib/report.ts":  "export function total(xs: string[]): number {\n  return xs.length;\n}\n",
		"src/app.ts":         "console.log(1);\n",
		"src/other/money.ts": "export function parseAmount(s: string): number {\n  return 0;\n}\n",
	}, uses: []defUse{
		{kind: useImport, from: "src/app.ts", name: "parseAmount", prefix: "import { parseAmount } from './lib/money';\n\nconsole.log(parseAmount("},
		{kind: useImport, from: "src/app.ts", name: "parseAmount", prefix: "import { parseAmount } from '@/lib/money';\n\nconsole.log(parseAmount("},
		{kind: useAlias, as: "pa", from: "src/app.ts", name: "parseAmount", prefix: "import { parseAmount as pa } from './lib/money';\n\nconsole.log(pa("},
		{kind: useWildcard, from: "src/app.ts", name: "parseAmount", prefix: "import * as money from './lib/money';\n\nconsole.log(money.parseAmount("},
		{kind: useSamePkg, from: "src/lib/report.ts", name: "parseAmount", prefix: "import { parseAmount } from './money';\n\nexport function total(xs: string[]): number {\n  return xs.map((x) => parseAmount("},
		{kind: useReExport, from: "src/app.ts", name: "parseAmount", prefix: "import { parseAmount } from './lib';\n\nconsole.log(parseAmount("},
	}},
	{lang: "tsx", def: "src/components/Price.tsx", decoy: "src/other/", files: map[string]string{
		"src/components/Price.tsx": "/** Shows an amount in cents. */\nexport function PriceTag({ cents }: { cents: number }) {\n  return <span>{cents / 100}</span>;\n}\n",
		"src/components/index.tsx": "export { PriceTag } from './Price';\n",
		"src/components/Cart.tsx":  "export function Cart() {\n  return null;\n}\n",
		"src/App.tsx":              "export function App() {\n  return null;\n}\n",
		"src/other/Price.tsx":      "export function PriceTag() {\n  return null;\n}\n",
	}, uses: []defUse{
		{kind: useImport, from: "src/App.tsx", name: "PriceTag", prefix: "import { PriceTag } from './components/Price';\n\nexport function App() {\n  return <PriceTag cents={"},
		{kind: useAlias, as: "Tag", from: "src/App.tsx", name: "PriceTag", prefix: "import { PriceTag as Tag } from './components/Price';\n\nexport function App() {\n  return <Tag cents={"},
		{kind: useWildcard, from: "src/App.tsx", name: "PriceTag", prefix: "import * as price from './components/Price';\n\nexport function App() {\n  return <price.PriceTag cents={"},
		{kind: useSamePkg, from: "src/components/Cart.tsx", name: "PriceTag", prefix: "import { PriceTag } from './Price';\n\nexport function Cart() {\n  return <PriceTag cents={"},
		{kind: useReExport, from: "src/App.tsx", name: "PriceTag", prefix: "import { PriceTag } from './components';\n\nexport function App() {\n  return <PriceTag cents={"},
	}},
	{lang: "rust", def: "src/money.rs", decoy: "src/other", files: map[string]string{
		"src/lib.rs":       "pub mod money;\npub mod report;\nmod other;\n\npub use money::parse_amount;\n",
		"src/money.rs":     "/// Reads an amount in cents.\npub fn parse_amount(s: &str) -> u32 {\n    s.parse::<u32>().unwrap_or(0) * 100\n}\n",
		"src/report.rs":    "pub fn total(xs: &[&str]) -> u32 {\n    xs.len() as u32\n}\n",
		"src/bin/app.rs":   "fn main() {}\n",
		"src/other/mod.rs": "pub fn parse_amount(s: &str) -> f64 {\n    0.0\n}\n",
	}, uses: []defUse{
		{kind: useImport, from: "src/report.rs", name: "parse_amount", prefix: "use crate::money::parse_amount;\n\npub fn total(xs: &[&str]) -> u32 {\n    xs.iter().map(|x| parse_amount("},
		{kind: useImport, from: "src/report.rs", name: "parse_amount", prefix: "use crate::{money::{self, parse_amount}, other};\n\npub fn total(xs: &[&str]) -> u32 {\n    xs.iter().map(|x| parse_amount("},
		{kind: useAlias, as: "cents", from: "src/report.rs", name: "parse_amount", prefix: "use crate::money::parse_amount as cents;\n\npub fn total(xs: &[&str]) -> u32 {\n    xs.iter().map(|x| cents("},
		{kind: useWildcard, from: "src/report.rs", name: "parse_amount", prefix: "use crate::money::*;\n\npub fn total(xs: &[&str]) -> u32 {\n    xs.iter().map(|x| parse_amount("},
		{kind: useSamePkg, from: "src/report.rs", name: "parse_amount", prefix: "use super::money::parse_amount;\n\npub fn total(xs: &[&str]) -> u32 {\n    xs.iter().map(|x| parse_amount("},
		{kind: useQualified, from: "src/report.rs", name: "parse_amount", prefix: "pub fn total(xs: &[&str]) -> u32 {\n    xs.iter().map(|x| crate::money::parse_amount("},
		{kind: useQualified, from: "src/report.rs", name: "parse_amount", prefix: "use crate::money;\n\npub fn total(xs: &[&str]) -> u32 {\n    xs.iter().map(|x| money::parse_amount("},
		{kind: useReExport, from: "src/report.rs", name: "parse_amount", prefix: "use crate::parse_amount;\n\npub fn total(xs: &[&str]) -> u32 {\n    xs.iter().map(|x| parse_amount("},
	}},
	{lang: "c", def: "src/money.c", decoy: "other/", files: map[string]string{
		"include/money.h": "#ifndef MONEY_H\n#define MONEY_H\n\n/* Reads an amount in cents. */\nint parse_amount(const char *s);\n\n#endif\n",
		"src/money.c":     "#include <stdlib.h>\n\n#include \"money.h\"\n\nint parse_amount(const char *s) {\n  return atoi(s) * 100;\n}\n",
		"src/report.c":    "#include \"money.h\"\n\nint total(void) { return 0; }\n",
		"app/main.c":      "int main(void) { return 0; }\n",
		"other/parse.c":   "static double parse_amount(const char *s) { return 0; }\n",
	}, uses: []defUse{
		{kind: useImport, from: "app/main.c", name: "parse_amount", want: []string{"include/money.h", "src/money.c"}, prefix: "#include <stdio.h>\n\n#include \"money.h\"\n\nint main(void) {\n  printf(\"%d\\n\", parse_amount("},
		{kind: useSamePkg, from: "src/report.c", name: "parse_amount", want: []string{"include/money.h", "src/money.c"}, prefix: "#include \"money.h\"\n\nint total(void) { return parse_amount("},
		{kind: useDeclared, from: "app/main.c", name: "parse_amount", prefix: "#include <stdio.h>\n\n#include \"money.h\"\n\nint main(void) {\n  printf(\"%d\\n\", parse_amount("},
	}},
	{lang: "cpp", def: "src/money.cc", decoy: "other/", files: map[string]string{
		"include/shop/money.h": "#pragma once\n\n#include <string>\n\nnamespace shop {\n\n// Reads an amount in cents.\nint parse_amount(const std::string& s);\n\n}  // namespace shop\n",
		"src/money.cc":         "#include \"shop/money.h\"\n\nnamespace shop {\n\nint parse_amount(const std::string& s) {\n  return std::stoi(s) * 100;\n}\n\n}  // namespace shop\n",
		"src/report.cc":        "#include \"shop/money.h\"\n\nnamespace shop {\n\nint total() { return 0; }\n\n}  // namespace shop\n",
		"app/main.cc":          "int main() { return 0; }\n",
		"other/parse.cc":       "namespace other {\n\ndouble parse_amount(const char* s) { return 0; }\n\n}  // namespace other\n",
	}, uses: []defUse{
		{kind: useImport, from: "app/main.cc", name: "parse_amount", want: []string{"include/shop/money.h", "src/money.cc"}, prefix: "#include <cstdio>\n\n#include \"shop/money.h\"\n\nint main() {\n  std::printf(\"%d\\n\", shop::parse_amount("},
		{kind: useImport, from: "app/main.cc", name: "parse_amount", want: []string{"include/shop/money.h", "src/money.cc"}, prefix: "#include \"shop/money.h\"\n\nusing shop::parse_amount;\n\nint main() {\n  return parse_amount("},
		{kind: useWildcard, from: "app/main.cc", name: "parse_amount", want: []string{"include/shop/money.h", "src/money.cc"}, prefix: "#include \"shop/money.h\"\n\nusing namespace shop;\n\nint main() {\n  return parse_amount("},
		{kind: useSamePkg, from: "src/report.cc", name: "parse_amount", want: []string{"include/shop/money.h", "src/money.cc"}, prefix: "#include \"shop/money.h\"\n\nnamespace shop {\n\nint total() { return parse_amount("},
		{kind: useDeclared, from: "app/main.cc", name: "parse_amount", prefix: "#include <cstdio>\n\n#include \"shop/money.h\"\n\nint main() {\n  std::printf(\"%d\\n\", shop::parse_amount("},
	}},
	{lang: "swift", def: "Sources/ShopKit/Money.swift", decoy: "Sources/Other/", files: map[string]string{
		"Package.swift":                "// swift-tools-version:5.9\nimport PackageDescription\n\nlet package = Package(name: \"Shop\")\n",
		"Sources/ShopKit/Money.swift":  "/// Reads an amount in cents.\npublic func parseAmount(_ s: String) -> Int {\n    return (Int(s) ?? 0) * 100\n}\n",
		"Sources/ShopKit/Report.swift": "func total(_ xs: [String]) -> Int {\n    return xs.count\n}\n",
		"Sources/App/main.swift":       "print(1)\n",
		"Sources/Other/Parse.swift":    "func parseAmount(_ s: String) -> Double {\n    return 0\n}\n",
	}, uses: []defUse{
		{kind: useImport, from: "Sources/App/main.swift", name: "parseAmount", prefix: "import ShopKit\n\nlet cents = parseAmount("},
		{kind: useSamePkg, from: "Sources/ShopKit/Report.swift", name: "parseAmount", prefix: "func total(_ xs: [String]) -> Int {\n    return xs.map { parseAmount("},
		{kind: useQualified, from: "Sources/App/main.swift", name: "parseAmount", prefix: "import ShopKit\n\nlet cents = ShopKit.parseAmount("},
	}},
}

// defResult is what query and serve answered for one defUse: the "def:" parts
// (path and reason) of each.
type defResult struct {
	use          defUse
	query, serve []string
}

// ok reports whether both answers hold a def part of use.name from one of the
// wanted files and none from the decoy's folder.
func (r defResult) ok(m defModule) bool {
	return defFound(r.query, r.use, m) && defFound(r.serve, r.use, m)
}

func defFound(defs []string, u defUse, m defModule) bool {
	found := false
	for _, d := range defs {
		p, why, _ := strings.Cut(d, " ")
		if strings.HasPrefix(p, m.decoy) {
			return false
		}
		local := u.name
		if u.as != "" {
			local = u.as
		}
		found = found || slices.Contains(u.want, p) && strings.HasPrefix(why, "def:"+local+"(")
	}
	return found
}

// TestDefinitionsPerLanguage: in a small module of every language, a definition used
// in each of the language's ways (defModules) reaches the context as a "def:" part
// of its own file, not of the decoy of the same name, both from `repoctx query` and
// from `repoctx serve` after the defining file is saved. The import and same-package
// uses must resolve in every language; the table of what resolves per use kind
// (testdata/definitions.md, also in README.md and docs/languages.md) must match the
// results (-update rewrites the three).
func TestDefinitionsPerLanguage(t *testing.T) {
	// serve's own tests check its concurrency under -race.
	racetest.Skip(t, "indexes and queries a module per language twice, by query and by serve")
	langs := map[string]bool{}
	for _, m := range defModules {
		langs[m.lang] = true
	}
	for _, l := range grammars.Names() {
		if !langs[l] {
			t.Errorf("language %s has no module in defModules", l)
		}
	}
	results := map[string][]defResult{}
	for _, m := range defModules {
		t.Run(m.lang, func(t *testing.T) {
			results[m.lang] = moduleDefs(t, m)
			for _, r := range results[m.lang] {
				if !r.ok(m) && (r.use.kind == useImport || r.use.kind == useSamePkg) {
					t.Errorf("%s use of %s in %s: query def parts %q, serve def parts %q; want %v", r.use.kind, r.use.name, r.use.from, r.query, r.serve, r.use.want)
				}
			}
		})
	}
	if t.Failed() {
		return
	}
	table := definitionsTable(results)
	checkGenerated(t, "../../testdata/definitions.md", "", table)
	checkGenerated(t, "../../README.md", "definitions", readmeTable(table))
	checkGenerated(t, "../../docs/languages.md", "definitions", table)
}

// moduleDefs writes m to a new folder, serves it with the defining file in an
// earlier version (its definitions' names changed), saves the defining file, and
// then asks query and serve for each of m's uses.
func moduleDefs(t *testing.T, m defModule) []defResult {
	dir := filepath.Join(t.TempDir(), "shop")
	final := m.files[m.def]
	draft := final
	for _, u := range m.uses {
		draft = strings.ReplaceAll(draft, u.name, u.name+"Draft")
	}
	for p, text := range m.files {
		if p == m.def {
			text = draft
		}
		full := filepath.Join(dir, filepath.FromSlash(p))
		must(t, os.MkdirAll(filepath.Dir(full), 0o755))
		must(t, os.WriteFile(full, []byte(text), 0o644))
	}
	cfg := serve.DefaultConfig()
	cfg.CacheDir = t.TempDir()
	updated := make(chan serve.Update, 10)
	cfg.OnUpdate = func(u serve.Update) { updated <- u }
	srv, err := serve.New(context.Background(), []serve.Folder{{Dir: dir, Repo: index.FolderRepo(dir)}}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	<-updated
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	// Saved as editors do, whole: written beside and renamed over the draft, so the
	// server never reads a half-written file.
	tmp := filepath.Join(t.TempDir(), "save")
	must(t, os.WriteFile(tmp, []byte(final), 0o644))
	must(t, os.Rename(tmp, filepath.Join(dir, filepath.FromSlash(m.def))))
	for deadline := time.After(20 * time.Second); ; {
		select {
		case u := <-updated:
			if u.Changed+u.Added == 0 {
				continue
			}
		case <-deadline:
			t.Fatal("the save was not seen within 20 s")
		}
		break
	}
	var out []defResult
	for _, u := range m.uses {
		if u.want == nil {
			u.want = []string{m.def}
		}
		r := defResult{use: u}
		pf := filepath.Join(t.TempDir(), "prefix.txt")
		must(t, os.WriteFile(pf, []byte(u.prefix), 0o644))
		code, stdout, stderr := run(t, "query", dir, "--file", u.from, "--prefix-file", pf, "--cache-dir", t.TempDir(), "--json")
		if code != 0 {
			t.Fatalf("query: exit %d: %s", code, stderr)
		}
		var q queryJSON
		must(t, json.Unmarshal([]byte(stdout), &q))
		r.query = defParts(q.Parts)
		body, _ := json.Marshal(map[string]any{"path": u.from, "prefix": u.prefix, "suffix": ""})
		resp, err := http.Post(hs.URL+"/v1/context", "application/json", bytes.NewReader(body))
		must(t, err)
		var s serve.ContextResponse
		err = json.NewDecoder(resp.Body).Decode(&s)
		resp.Body.Close()
		must(t, err)
		if resp.StatusCode != 200 {
			t.Fatalf("serve: %d", resp.StatusCode)
		}
		r.serve = defParts(s.Parts)
		if !r.ok(m) || testing.Verbose() {
			t.Logf("%s %s (%s): query %q serve %q", u.kind, u.name, strings.ReplaceAll(lastLine(u.prefix), "\n", " "), r.query, r.serve)
		}
		out = append(out, r)
	}
	return out
}

func lastLine(s string) string {
	return strings.TrimSpace(s[strings.LastIndexByte(strings.TrimRight(s, "\n"), '\n')+1:])
}

// defParts returns the "def:" reasons of parts, as "path why".
func defParts(parts []repoctx.Part) []string {
	var out []string
	for _, p := range parts {
		for _, w := range p.Why {
			if strings.HasPrefix(w, "def:") {
				out = append(out, p.Path+" "+w)
			}
		}
	}
	return out
}

// definitionsTable renders results as a Markdown table, a row per language and a
// column per use kind: "yes" when every use of that kind resolved from query and
// serve, "no" when one did not, "—" when the module has no use of that kind; then
// the uses, one list item per language.
func definitionsTable(results map[string][]defResult) string {
	var b strings.Builder
	b.WriteString("| language | " + strings.Join(useKinds, " | ") + " |\n|---|")
	b.WriteString(strings.Repeat("---|", len(useKinds)) + "\n")
	for _, m := range defModules {
		cells := []string{"`" + m.lang + "`"}
		for _, k := range useKinds {
			cell := "—"
			for _, r := range results[m.lang] {
				if r.use.kind != k {
					continue
				}
				if !r.ok(m) {
					cell = "no"
					break
				}
				cell = "yes"
			}
			cells = append(cells, cell)
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	b.WriteString("\nThe uses, by language (the line of the cursor; `no`: no def part of the definition's file from query or serve):\n\n")
	for _, m := range defModules {
		var uses []string
		for _, r := range results[m.lang] {
			s := fmt.Sprintf("%s `%s`", r.use.kind, lastLine(r.use.prefix))
			if imp := importLines(r.use.prefix); imp != "" {
				s += " after `" + imp + "`"
			}
			if !r.ok(m) {
				s += " (no)"
			}
			uses = append(uses, s)
		}
		fmt.Fprintf(&b, "- `%s`: %s\n", m.lang, strings.Join(uses, "; "))
	}
	return b.String()
}

// importLines returns the import lines of a hole's prefix, joined by " ".
func importLines(prefix string) string {
	var out []string
	block := false // inside Go's `import (...)`
	for _, l := range strings.Split(prefix, "\n") {
		t := strings.TrimSpace(l)
		if block {
			block = t != ")"
			if t != "" {
				out = append(out, t)
			}
			continue
		}
		block = t == "import ("
		for _, kw := range []string{"import ", "from ", "use ", "using ", "#include \"", "require", "const {", "package ", "namespace "} {
			if strings.HasPrefix(t, kw) && !strings.HasPrefix(t, "namespace "+"{") {
				out = append(out, t)
				break
			}
		}
	}
	return strings.Join(out, " ")
}

// readmeTable is the table of definitionsTable without the list of uses.
func readmeTable(table string) string {
	head, _, _ := strings.Cut(table, "\n\n")
	return head + "\n"
}

// checkGenerated compares want with the file at path (with marker, the text between
// its lines "<!-- marker:begin -->" and "<!-- marker:end -->"); with -update it
// rewrites that text instead.
func checkGenerated(t *testing.T, path, marker, want string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil && !(*update && marker == "" && os.IsNotExist(err)) {
		t.Fatal(err)
	}
	text := string(raw)
	begin, end, got := 0, len(text), text
	if marker != "" {
		b, e := "<!-- "+marker+":begin -->\n", "<!-- "+marker+":end -->"
		i, j := strings.Index(text, b), strings.Index(text, e)
		if i < 0 || j < i {
			t.Fatalf("%s: no %q ... %q lines", path, strings.TrimSpace(b), e)
		}
		begin, end = i+len(b), j
		got = text[begin:end]
	}
	if got == want {
		return
	}
	if *update {
		must(t, os.WriteFile(path, []byte(text[:begin]+want+text[end:]), 0o644))
		return
	}
	t.Errorf("%s differs from the test's results (go test -run %s ./cmd/repoctx -update rewrites it):\n%s", path, t.Name(), want)
}
