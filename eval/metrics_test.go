package eval

import (
	"math/rand/v2"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/repoctx/repoctx/complete"
	"github.com/repoctx/repoctx/grammars"
)

func TestIdentifiers(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"val x_1 = foo.barBaz(2)", []string{"val", "x_1", "foo", "barBaz"}},
		{"0x1F 3abc _ __init__", []string{"x1F", "abc", "_", "__init__"}},
		{"café naïve", []string{"caf", "na", "ve"}}, // ASCII only, as the regular expression says
		{"", nil},
	} {
		if got := Identifiers(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Identifiers(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestNewIdentifiersAndIDRecall(t *testing.T) {
	kt := grammars.Lookup("kotlin").IsKeyword
	py := grammars.Lookup("python").IsKeyword
	for _, tc := range []struct {
		name                   string
		middle, prefix, suffix string
		context                string
		kw                     func(string) bool
		wantIDs                []string
		wantRecall             float64
	}{
		{
			name:   "kotlin: keywords, short names and prefix identifiers are not new",
			middle: "    val total = items.sumOf { it.price } + x\n",
			prefix: "fun sum(items: List<Item>): Int {\n", suffix: "}\n",
			// val, it: keywords; x: 1 byte; items: in the prefix.
			context: "<|file_sep|>Item.kt\ndata class Item(val price: Int)\n",
			kw:      kt, wantIDs: []string{"price", "sumOf", "total"},
			wantRecall: 1.0 / 3, // only "price" occurs in the context
		},
		{
			name:   "python: self and None are keywords; matches are whole and case-sensitive",
			middle: "        self.cache = LRUCache(maxsize) or None\n",
			prefix: "class A:\n    def __init__(self, maxsize):\n", suffix: "",
			context: "<|file_sep|>c.py\nclass LRUCache:\n    lrucache = 1\n    cache_size = 2\n",
			kw:      py, wantIDs: []string{"LRUCache", "cache"},
			wantRecall: 0.5, // "cache" only occurs inside cache_size
		},
		{
			name:   "suffix identifiers are not new either",
			middle: "return helper(value)", prefix: "", suffix: "def helper(v): pass",
			context: "value", kw: py, wantIDs: []string{"value"}, wantRecall: 1,
		},
		{
			name:   "no new identifiers",
			middle: "return x", prefix: "", suffix: "", context: "anything", kw: py,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ids := NewIdentifiers(tc.middle, tc.prefix, tc.suffix, tc.kw)
			if !reflect.DeepEqual(ids, tc.wantIDs) {
				t.Errorf("NewIdentifiers = %q, want %q", ids, tc.wantIDs)
			}
			r, n := IDRecall(tc.middle, tc.prefix, tc.suffix, tc.context, tc.kw)
			if n != len(tc.wantIDs) || !near(r, tc.wantRecall) {
				t.Errorf("IDRecall = %v over %d, want %v over %d", r, n, tc.wantRecall, len(tc.wantIDs))
			}
		})
	}
}

func TestMainLineAndLineChrF(t *testing.T) {
	middle := "    if (x) {\n        return computeTotal(items)\n    }\n"
	if got := MainLine(middle); got != "return computeTotal(items)" {
		t.Fatalf("MainLine = %q", got)
	}
	if got := MainLine(" \n\t\n"); got != "" {
		t.Errorf("MainLine(blank) = %q", got)
	}
	if got := MainLine("ab\ncd\n"); got != "ab" {
		t.Errorf("MainLine ties: got %q, want the first", got)
	}
	for _, tc := range []struct {
		context string
		want    float64
	}{
		{"", 0},
		{"<|file_sep|>a.kt\nfoo\n    return computeTotal(items)  \nbar\n", 1},
		// The best line wins: "abd" scores 7/18 against "abc", "zzz" 0.
		{"zzz\nabd\n", 7.0 / 18},
	} {
		m := middle
		if tc.want == 7.0/18 {
			m = "abc\n"
		}
		if got := LineChrF(m, tc.context); !near(got, tc.want) {
			t.Errorf("LineChrF(%q, %q) = %v, want %v", m, tc.context, got, tc.want)
		}
	}
	if got := LineChrF("\n", "abc\n"); got != 0 {
		t.Errorf("LineChrF with a blank middle = %v, want 0", got)
	}
}

func TestCopyChrF(t *testing.T) {
	// copy_chrf compares complete.CopyPredict's line with the middle's first non-blank line.
	ctx := "<|file_sep|>p\na\nb\nc\nfoo(x)\n"
	if got := CopyChrF("a\nb\nc\n", "\n  foo(y)\n  bar\n", ctx); !near(got, 17.0/45) {
		t.Errorf("CopyChrF = %v, want 17/45", got)
	}
}

func TestJaccardAndQuery(t *testing.T) {
	a, b := complete.TokenSet("x y z"), complete.TokenSet("y z w v")
	if got := jaccard(a, b); !near(got, 2.0/5) {
		t.Errorf("jaccard = %v, want 2/5", got)
	}
	if got := jaccard(complete.TokenSet(""), complete.TokenSet("")); got != 0 {
		t.Errorf("jaccard of empty sets = %v", got)
	}
}

// TestScannersMatchRegexps checks the hand-written scanners against the
// regular expressions they implement.
func TestScannersMatchRegexps(t *testing.T) {
	identRe := regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
	wordRe := regexp.MustCompile(`[A-Za-z0-9_]+`)
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []rune("aZ_09 .(é\n")
	for i := 0; i < 5000; i++ {
		var sb strings.Builder
		for n := rng.IntN(20); n > 0; n-- {
			sb.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		s := sb.String()
		if got, want := Identifiers(s), identRe.FindAllString(s, -1); !reflect.DeepEqual(got, want) {
			t.Fatalf("Identifiers(%q) = %q, regexp gives %q", s, got, want)
		}
		var got []string
		complete.EachToken(s, func(w string) { got = append(got, w) })
		if want := wordRe.FindAllString(s, -1); !reflect.DeepEqual(got, want) {
			t.Fatalf("complete.EachToken(%q) = %q, regexp gives %q", s, got, want)
		}
	}
}
