package kotlin

import (
	"fmt"
	"strings"
	"testing"

	"github.com/repoctx/repoctx/grammars"
)

// TestKotlinOutline: declarations, their lines, names, signatures and members, read
// from the text alone, broken code included.
func TestKotlinOutline(t *testing.T) {
	src := `package demo

import a.b.C

/** Doc. */
@Suppress("x")
data class Point(val x: Int, val y: Int = f { 1 }) : Shape {
    val s = "}{"  // braces in strings and comments: } {
    fun area(): Int =
        x * y

    companion object {
        const val ZERO = 0
    }

    context(log: Log)
    fun draw() {
        log.write("$x")
    }
}

fun <T> List<T>.second(): T = this[1]

val broken = listOf(1, 2,

class Tail : Base(, {
    fun a() = 1
}

typealias Id = Long
`
	var got []string
	var show func(ds []grammars.Decl, ind string)
	line := func(b int) int { return strings.Count(src[:b], "\n") + 1 }
	show = func(ds []grammars.Decl, ind string) {
		for _, d := range ds {
			got = append(got, fmt.Sprintf("%s%s %s %d-%d %q", ind, d.Kind, d.Name, line(d.Start), line(d.End), d.Signature))
			show(d.Members, ind+"  ")
		}
	}
	show(ktOutline(Rewrite([]byte(src)), []byte(src)), "")
	want := []string{
		`class Point 6-20 "data class Point(val x: Int, val y: Int = f { 1 }) : Shape"`,
		`  property s 8-8 "val s"`,
		`  function area 9-10 "fun area(): Int"`,
		`  class Companion 12-14 "companion object"`,
		`    property ZERO 13-13 "const val ZERO"`,
		`  function draw 16-19 "context(log: Log) fun draw()"`,
		`function second 22-22 "fun <T> List<T>.second(): T"`,
		`property broken 24-24 "val broken"`,
		`class Tail 26-28 "class Tail : Base(,"`,
		`  function a 27-27 "fun a()"`,
		`property Id 30-30 "typealias Id"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("outline:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestKtClassify: strings (templates included), characters and comments are told
// from code.
func TestKtClassify(t *testing.T) {
	src := "a \"b${c + \"}\"}d\" 'e' // f\n/* g /* h */ i */ j \"\"\"k\"l\"\"\" m"
	cls := ktClassify([]byte(src))
	var sb strings.Builder
	for i := range src {
		sb.WriteByte("csm"[cls[i]])
	}
	r := strings.Repeat
	want := "cc" + r("s", 14) + "c" + "sss" + "c" + r("m", 4) + "c" + r("m", 17) + "ccc" + r("s", 9) + "cc"
	if sb.String() != want {
		t.Errorf("classes\n%s\n%s\nwant\n%s", src, sb.String(), want)
	}
}
