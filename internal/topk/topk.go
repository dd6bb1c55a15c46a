// Package topk keeps the k best of a stream of values: a bounded binary heap whose
// root is the worst value kept, O(n log k) for n values. It is the one top-k helper
// of the project (BM25 candidates, pruning thresholds, dense hits).
package topk

import "slices"

// Heap keeps at most k values, the best under its comparison. The zero value is not
// usable; make one with New. A Heap is not safe for concurrent use.
type Heap[T any] struct {
	k   int
	cmp func(a, b T) int // negative: a ranks before (is better than) b
	h   []T
}

// New returns a heap that keeps the k best values under cmp, which returns a
// negative number when a ranks before b, positive when after, 0 for ties (a total
// order gives deterministic results). k <= 0 keeps nothing.
//
// The heap reserves room for at most [InitialCap] values up front and grows as
// values are kept, so its storage is bounded by the number of values pushed, not by
// k: a huge k over a few values costs no more than a small one.
func New[T any](k int, cmp func(a, b T) int) *Heap[T] {
	k = max(k, 0)
	return &Heap[T]{k: k, cmp: cmp, h: make([]T, 0, min(k, InitialCap))}
}

// InitialCap is the most values New reserves room for before any is pushed.
const InitialCap = 64

// Reset empties the heap and sets its bound to k, keeping its storage (which, as in
// New, grows only as values are kept).
func (t *Heap[T]) Reset(k int) {
	t.k = max(k, 0)
	t.h = t.h[:0]
}

// Len returns the number of values kept.
func (t *Heap[T]) Len() int { return len(t.h) }

// Full reports whether k values are kept.
func (t *Heap[T]) Full() bool { return len(t.h) >= t.k }

// Worst returns the worst value kept (the next to go); the heap must not be empty.
func (t *Heap[T]) Worst() T { return t.h[0] }

// Would reports whether Push(x) would keep x: the heap is not full, or x ranks
// before the worst value kept.
func (t *Heap[T]) Would(x T) bool {
	return t.k > 0 && (len(t.h) < t.k || t.cmp(x, t.h[0]) < 0)
}

// Push offers x and reports whether it was kept (possibly dropping the worst).
func (t *Heap[T]) Push(x T) bool {
	if !t.Would(x) {
		return false
	}
	if len(t.h) < t.k {
		t.h = append(t.h, x)
		t.up(len(t.h) - 1)
		return true
	}
	t.h[0] = x
	t.down(0)
	return true
}

// worse reports whether h[i] ranks after h[j].
func (t *Heap[T]) worse(i, j int) bool { return t.cmp(t.h[i], t.h[j]) > 0 }

func (t *Heap[T]) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !t.worse(i, p) {
			return
		}
		t.h[i], t.h[p] = t.h[p], t.h[i]
		i = p
	}
}

func (t *Heap[T]) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(t.h) {
			return
		}
		c := l
		if r := l + 1; r < len(t.h) && t.worse(r, l) {
			c = r
		}
		if !t.worse(c, i) {
			return
		}
		t.h[i], t.h[c] = t.h[c], t.h[i]
		i = c
	}
}

// Sorted sorts the kept values best first and returns them; the slice is the
// heap's storage: the heap must be Reset before it is pushed to again.
func (t *Heap[T]) Sorted() []T {
	slices.SortFunc(t.h, t.cmp)
	return t.h
}

// Best returns the k best of values under cmp, best first (see New). values is not
// modified; when k >= len(values) it returns a sorted copy of all of them.
func Best[T any](values []T, k int, cmp func(a, b T) int) []T {
	if k >= len(values) {
		out := slices.Clone(values)
		slices.SortFunc(out, cmp)
		return out
	}
	t := New(k, cmp)
	for _, v := range values {
		t.Push(v)
	}
	return t.Sorted()
}
