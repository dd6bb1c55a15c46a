package main

import (
	"strings"
	"testing"
)

// TestServeProxyFlags: the proxy's flags without --upstream, and a bad upstream URL,
// are usage errors (exit 2) naming the flag, before any indexing.
func TestServeProxyFlags(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--window", "100", dir}, "--window needs --upstream"},
		{[]string{"serve", "--context-deadline", "1s", dir}, "--context-deadline needs --upstream"},
		{[]string{"serve", "--upstream", "http://127.0.0.1:8012", "--window", "0", dir}, "--window and --extra-tokens must be positive"},
		{[]string{"serve", "--upstream", "http://127.0.0.1:8012", "--fim-template", "nope", dir}, "--fim-template: unknown FIM template"},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--cache-dir", t.TempDir(), "--upstream", "ftp://host", dir}, "--upstream must be the model server's http:// or https:// URL"},
	} {
		code, _, stderr := run(t, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}
