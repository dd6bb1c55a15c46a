package dataset

import (
	"strings"
	"testing"
)

// mustContain fails unless err is non-nil and its message holds every part.
func mustContain(t testing.TB, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want an error containing %q, got nil", parts)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "dataset: ") {
		t.Errorf("error %q does not start with \"dataset: \"", msg)
	}
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Errorf("error %q does not contain %q", msg, p)
		}
	}
}
