package retrieve

import (
	"slices"
	"strings"
	"testing"
)

func TestTokens(t *testing.T) {
	long := strings.Repeat("ab", MaxTokenBytes) // 2*MaxTokenBytes bytes
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", nil},
		{"punctuation only", "+-*/ (){}[];", nil},
		{"single word", "parse", []string{"parse"}},
		{"single char identifier kept", "i = x", []string{"i", "x"}},
		{"camelCase", "parseJson", []string{"parsejson", "parse", "json"}},
		{"acronym inside", "parseHTTPResponse", []string{"parsehttpresponse", "parse", "http", "response"}},
		{"acronym first", "JSONReader", []string{"jsonreader", "json", "reader"}},
		{"acronym last", "isOK", []string{"isok", "is", "ok"}},
		{"all caps not repeated", "HTTP", []string{"http"}},
		{"PascalCase", "BoundedCache", []string{"boundedcache", "bounded", "cache"}},
		{"snake_case", "max_line_len", []string{"max_line_len", "max", "line", "len"}},
		{"SCREAMING_SNAKE", "MAX_SIZE", []string{"max_size", "max", "size"}},
		{"leading underscore", "_private", []string{"_private", "private"}},
		{"dunder", "__init__", []string{"__init__", "init"}},
		{"underscore only", "_", []string{"_"}},
		{"letter digit boundary", "utf8Len", []string{"utf8len", "utf", "len"}},
		{"multi-digit part kept", "base64Encode", []string{"base64encode", "base", "64", "encode"}},
		{"acronym then digit", "HTTP2Server", []string{"http2server", "http", "server"}},
		{"single char parts dropped", "getX", []string{"getx", "get"}},
		{"i18n", "i18n", []string{"i18n", "18"}},
		{"numbers whole", "x = 0x1F + 1_000 + 42L", []string{"x", "0x1f", "1_000", "42l"}},
		{"decimal is two numbers", "3.14", []string{"3", "14"}},
		{"non-ASCII snake", "café_total", []string{"café_total", "café", "total"}},
		{"non-ASCII camel", "ÜberCool", []string{"übercool", "über", "cool"}},
		{"caseless letters", "变量名 = 1", []string{"变量名", "1"}},
		{"caseless then camel", "名前Value", []string{"名前value", "名前", "value"}},
		{"combining mark stays in token", "cafe\u0301Bar", []string{"cafe\u0301bar", "cafe\u0301", "bar"}},
		{"greek", "ΑλφαΒήτα", []string{"αλφαβήτα", "αλφα", "βήτα"}},
		{"code line", "fun load(key: String): Value? = cache[key]",
			[]string{"fun", "load", "key", "string", "value", "cache", "key"}},
		{"member access", "self.max_size = maxSize",
			[]string{"self", "max_size", "max", "size", "maxsize", "max", "size"}},
		{"dollar separates", "$scope.x", []string{"scope", "x"}},
		{"too long dropped", long + " ok", []string{"ok"}},
		{"too long keeps parts", long + "_tail", []string{"tail"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Tokens(tc.in)
			if !slices.Equal(got, tc.want) {
				t.Errorf("Tokens(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if n := countTokens(tc.in); n != len(tc.want) {
				t.Errorf("countTokens(%q) = %d, want %d", tc.in, n, len(tc.want))
			}
		})
	}
}

func BenchmarkTokens(b *testing.B) {
	src := strings.Repeat("func (c *BoundedCache) getOrLoad(key string, loadFn func() ([]byte, error)) ([]byte, error) {\n", 20)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		_ = Tokens(src)
	}
}
