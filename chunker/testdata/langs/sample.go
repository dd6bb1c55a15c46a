// Package x does.
package x

import (
	"fmt"
	. "github.com/a/b/pkg"
	str "strings"
)
import "os"

// Foo is.
type Foo struct {
	A int
}

type (
	Bar int
	Baz interface{ M() }
)

// New makes.
func New(a int) *Foo {
	return &Foo{A: a}
}

func (f *Foo) Get() int { return f.A }

var X = 1

const (
	C = 2
)
