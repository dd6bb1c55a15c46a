package dataset

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// encodingJSON is what PredictionLine wrote before appendJSONString: encoding/json's
// string encoding with HTML escaping off.
func encodingJSON(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// TestAppendJSONString holds appendJSONString to encoding/json, byte for byte, on
// every single byte and rune class it treats apart and on random strings of them.
func TestAppendJSONString(t *testing.T) {
	pieces := []string{"", "a", "Zz09", " ", "\"", "\\", "/", "<", ">", "&", "\x7f", "\u00e9", "\u2028", "\u2029", "\u2027", "\U0001F600",
		"\xff", "\xc3", "\xe2\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\ufffd", "\ufeff"}
	for c := range 0x20 {
		pieces = append(pieces, string(rune(c)))
	}
	for _, p := range pieces {
		if got, want := appendJSONString(nil, p), encodingJSON(p); !bytes.Equal(got, want) {
			t.Errorf("appendJSONString(%q) = %s, encoding/json %s", p, got, want)
		}
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 20000 {
		var s []byte
		for range rng.IntN(12) {
			s = append(s, pieces[rng.IntN(len(pieces))]...)
		}
		if got, want := appendJSONString([]byte("x"), string(s)), append([]byte("x"), encodingJSON(string(s))...); !bytes.Equal(got, want) {
			t.Fatalf("appendJSONString(%q) = %s, encoding/json %s", s, got, want)
		}
	}
}

// FuzzAppendJSONString: appendJSONString equals encoding/json on any string.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "a\"b\\c\n\u2028\xff<&>", "\x00\x1f\x7f\xc3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := appendJSONString(nil, s), encodingJSON(s); !bytes.Equal(got, want) {
			t.Fatalf("appendJSONString(%q) = %s, encoding/json %s", s, got, want)
		}
	})
}
