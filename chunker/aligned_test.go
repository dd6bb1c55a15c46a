package chunker

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// chunkAligned chunks src with an Aligned chunker and checks the invariants.
func chunkAligned(t *testing.T, path, src string, opts Options) []Chunk {
	t.Helper()
	f, err := Decode(path, []byte(src), 0)
	if err != nil {
		t.Fatalf("Decode(%s): %v", path, err)
	}
	a := NewAligned(opts)
	defer a.Close()
	cs, err := a.Chunk(f)
	if err != nil {
		t.Fatalf("Chunk(%s): %v", path, err)
	}
	if err := Validate(f, cs, a.opts.MaxChars); err != nil {
		t.Fatalf("invariants: %v\n%s", err, dump(cs))
	}
	again, _ := a.Chunk(f)
	if !reflect.DeepEqual(cs, again) {
		t.Fatalf("a second run differs:\n%s\n%s", dump(cs), dump(again))
	}
	return cs
}

// alignedKotlin is a class of members of 5-9 lines with a multi-line signature.
const alignedKotlin = `package demo.shop

import demo.shop.model.Item

class Cart(
    private val prices: PriceList,
    private val tax: Double = 0.2,
) {
    private val items = mutableListOf<Item>()

    fun add(item: Item) {
        require(item.count > 0) { "count" }
        items += item
        log("added ${item.name}")
    }

    fun remove(name: String): Boolean {
        val before = items.size
        items.removeAll { it.name == name }
        val removed = items.size < before
        if (removed) log("removed $name")
        return removed
    }

    fun total(): Double {
        var sum = 0.0
        for (item in items) {
            val price = prices.of(item.name)
            sum += price * item.count
        }
        return sum * (1 + tax)
    }

    fun summary(): String {
        val lines = items.map { "${it.name} x${it.count}" }
        val header = "cart of ${items.size}"
        return (listOf(header) + lines).joinToString("\n")
    }

    private fun log(msg: String) {
        println("[cart] $msg")
    }
}

fun emptyCart(prices: PriceList) = Cart(prices)
`

// alignedPython is the same shape in Python.
const alignedPython = `"""A shopping cart."""
import logging

log = logging.getLogger(__name__)


class Cart:
    def __init__(self, prices, tax=0.2):
        self.prices = prices
        self.tax = tax
        self.items = []

    def add(self, item):
        if item.count <= 0:
            raise ValueError("count")
        self.items.append(item)
        log.info("added %s", item.name)

    def remove(self, name):
        before = len(self.items)
        self.items = [i for i in self.items if i.name != name]
        removed = len(self.items) < before
        if removed:
            log.info("removed %s", name)
        return removed

    def total(self):
        total = 0.0
        for item in self.items:
            price = self.prices.of(item.name)
            total += price * item.count
        return total * (1 + self.tax)

    def summary(
        self,
        sep="\n",
    ):
        lines = [f"{i.name} x{i.count}" for i in self.items]
        head = f"cart of {len(self.items)}"
        return sep.join([head] + lines)


def empty_cart(prices):
    return Cart(prices)
`

// lineAt returns line n (1-based) of src.
func lineAt(src string, n int) string { return strings.Split(src, "\n")[n-1] }

func TestAlignedBoundaries(t *testing.T) {
	for _, tc := range []struct {
		path, src string
		bad       []string // prefixes (after indentation) no window may start with
		sigLines  []int    // lines of multi-line signatures no window may start on
	}{
		{"Cart.kt", alignedKotlin, []string{"}", ")", ""}, []int{6, 7, 8}},
		{"cart.py", alignedPython, []string{")", ""}, []int{35, 36, 37}},
	} {
		t.Run(tc.path, func(t *testing.T) {
			cs := chunkAligned(t, tc.path, tc.src, Options{WindowLines: 10, WindowOverlap: 5})
			if len(cs) < 4 {
				t.Fatalf("want several windows, got\n%s", dump(cs))
			}
			for i, c := range cs {
				if c.Kind != KindWindow || c.Fallback || c.ParseError {
					t.Errorf("chunk %d: kind %s fallback %v parse error %v", i, c.Kind, c.Fallback, c.ParseError)
				}
				if n := c.EndLine - c.StartLine + 1; n > 10+10/4 {
					t.Errorf("chunk %d: %d lines, over 12", i, n)
				}
				if i == 0 {
					continue
				}
				first := strings.TrimSpace(lineAt(tc.src, c.StartLine))
				for _, b := range tc.bad {
					if (b == "" && first == "") || (b != "" && strings.HasPrefix(first, b)) {
						t.Errorf("chunk %d starts on line %d %q, no statement boundary\n%s", i, c.StartLine, first, dump(cs))
					}
				}
				for _, l := range tc.sigLines {
					if c.StartLine == l {
						t.Errorf("chunk %d starts inside a signature (line %d)\n%s", i, l, dump(cs))
					}
				}
				if c.StartLine > cs[i-1].EndLine {
					t.Errorf("chunk %d does not overlap the one before\n%s", i, dump(cs))
				}
			}
		})
	}
}

func TestAlignedHeaders(t *testing.T) {
	cs := chunkAligned(t, "Cart.kt", alignedKotlin, Options{WindowLines: 6, WindowOverlap: 3})
	cls := "class Cart(private val prices: PriceList, private val tax: Double = 0.2)"
	for _, c := range cs {
		if c.StartLine <= 4 && c.Header != nil {
			t.Errorf("top-level window L%d has header %q", c.StartLine, c.Header)
		}
		if c.StartLine >= 10 && c.StartLine <= 42 && (len(c.Header) == 0 || c.Header[0] != cls) {
			t.Errorf("window L%d inside the class: header %q\n%s", c.StartLine, c.Header, dump(cs))
		}
		if c.StartLine > 11 && c.StartLine <= 15 && (len(c.Header) != 2 || c.Header[1] != "fun add(item: Item)") {
			t.Errorf("window L%d inside add: header %q", c.StartLine, c.Header)
		}
		if c.StartLine > 44 && c.Header != nil {
			t.Errorf("window L%d after the class: header %q", c.StartLine, c.Header)
		}
	}
	py := chunkAligned(t, "cart.py", alignedPython, Options{WindowLines: 6, WindowOverlap: 3})
	for _, c := range py {
		if c.StartLine > 27 && c.StartLine <= 32 && !reflect.DeepEqual(c.Header, []string{"class Cart:", "def total(self):"}) {
			t.Errorf("window L%d inside total: header %q\n%s", c.StartLine, c.Header, dump(py))
		}
	}
	for _, c := range chunkAligned(t, "Cart.kt", alignedKotlin, Options{WindowLines: 6, WindowOverlap: 3, NoHeader: true}) {
		if c.Header != nil {
			t.Errorf("NoHeader: window L%d has header %q", c.StartLine, c.Header)
		}
	}
}

func TestAlignedNoOverlap(t *testing.T) {
	for _, src := range []struct{ path, text string }{{"Cart.kt", alignedKotlin}, {"cart.py", alignedPython}} {
		cs := chunkAligned(t, src.path, src.text, Options{WindowLines: 10})
		for i := 1; i < len(cs); i++ {
			if cs[i].StartByte != cs[i-1].EndByte {
				t.Errorf("%s: overlap 0 but chunk %d starts at %d, the one before ends at %d\n%s", src.path, i, cs[i].StartByte, cs[i-1].EndByte, dump(cs))
			}
		}
	}
}

func TestAlignedSmallSiblingsTogether(t *testing.T) {
	// Ten one-line top-level functions and a 20-line window: one window holds all.
	var sb strings.Builder
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&sb, "fun f%d() = %d\n", i, i)
	}
	cs := chunkAligned(t, "F.kt", sb.String(), Options{})
	if len(cs) != 1 {
		t.Fatalf("want one window, got\n%s", dump(cs))
	}
}

func TestAlignedWindowsPicksShallowest(t *testing.T) {
	// 40 non-blank lines; depth 1 on lines 17 and 33, 3 elsewhere, line 22 none.
	text := strings.Repeat("x = 1\n", 40)
	li := newLineIndex([]byte(text))
	depth := make([]int32, 40)
	for i := range depth {
		depth[i] = 3
	}
	depth[17], depth[33], depth[22] = 1, 1, noBoundary
	got := alignedWindows(li, depth, 20, 10, 1000)
	var lines [][2]int
	for _, s := range got {
		lines = append(lines, [2]int{s.firstLine, s.lastLine})
	}
	// First window [0, 17): 17 is the shallowest cut in [15, 25]. The next starts
	// near 17-10 = 7 (range [2, 12]; all depth 3: the nearest, 7), and ends at 25
	// (target 27 in [22, 32] at depth 3... nearest to 27). Windows keep going the same way.
	if lines[0] != [2]int{0, 16} {
		t.Errorf("first window %v, want [0 16]", lines[0])
	}
	if lines[1][0] != 7 {
		t.Errorf("second window starts at %d, want 7", lines[1][0])
	}
	for i := 1; i < len(got); i++ {
		if got[i].end <= got[i-1].end || got[i].start > got[i-1].end {
			t.Errorf("windows %d-%d do not chain: %v", i-1, i, lines)
		}
	}
	if got[len(got)-1].end != len(text) {
		t.Errorf("last window ends at %d, want %d", got[len(got)-1].end, len(text))
	}
	for _, s := range got[1:] {
		if s.firstLine == 22 {
			t.Errorf("a window starts on line 22 (no boundary): %v", lines)
		}
	}
}

func TestAlignedKeyAndStrategy(t *testing.T) {
	if s, err := ParseStrategy("aligned"); err != nil || s != StrategyAligned {
		t.Fatalf("ParseStrategy(aligned) = %q, %v", s, err)
	}
	if k := (Options{}).Key(StrategyAligned); k != "aligned/c800/w20/o10" {
		t.Errorf("Key = %q", k)
	}
	if k := (Options{NoHeader: true}).Key(StrategyAligned); k != "aligned/c800/w20/o10/nh" {
		t.Errorf("Key without headers = %q", k)
	}
	if k := (Options{NoHeader: true}).Key(StrategyStructural); k != "structural/c800/w20/o5" {
		t.Errorf("structural Key with NoHeader = %q (it ignores the option)", k)
	}
	ch, err := New(StrategyAligned, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	if _, ok := ch.(TreeChunker); !ok {
		t.Errorf("the aligned chunker is no TreeChunker")
	}
}
