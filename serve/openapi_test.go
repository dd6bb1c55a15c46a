package serve

import (
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/repoctx/repoctx/assemble"
)

var updateOpenAPI = flag.Bool("update-openapi", false, "rewrite the options of docs/openapi.yaml from assemble.OptionTable")

// openAPIOptions returns the properties of docs/openapi.yaml's Options schema, made
// from assemble.OptionTable: one line per option with its JSON type, bounds, help
// and the live default (the server's flag).
func openAPIOptions() string {
	var b strings.Builder
	for i := range assemble.OptionTable {
		s := &assemble.OptionTable[i]
		typ := map[assemble.OptionKind]string{assemble.KindInt: "integer", assemble.KindFloat: "number", assemble.KindBool: "boolean"}[s.Kind]
		fields := []string{"type: " + typ}
		if s.Kind != assemble.KindBool {
			if s.MinExclusive {
				fields = append(fields, "exclusiveMinimum: "+s.Format(s.Min))
			} else {
				fields = append(fields, "minimum: "+s.Format(s.Min))
			}
			if !math.IsInf(s.Max, 1) {
				fields = append(fields, "maximum: "+s.Format(s.Max))
			}
		}
		h := s.JSONHelp()
		r, n := utf8.DecodeRuneInString(h)
		desc := string(unicode.ToUpper(r)) + h[n:] + "."
		if s.Kind == assemble.KindBool {
			desc += fmt.Sprintf(" Default: the server's --%s (off).", s.Name)
		} else {
			desc += fmt.Sprintf(" Accepted: %s. Default: the server's --%s (%s).", s.Want, s.Name, s.Format(assemble.PresetLive.Default(s)))
		}
		if s.Requires != "" {
			desc += fmt.Sprintf(" Needs %s above 0 unless 0.", assemble.Option(s.Requires).JSON)
		}
		fields = append(fields, "description: "+strconv.Quote(desc))
		fmt.Fprintf(&b, "        %s: { %s }\n", s.JSON, strings.Join(fields, ", "))
	}
	return b.String()
}

// TestOpenAPIOptions: docs/openapi.yaml's Options schema is the option table's
// (go test ./serve -run TestOpenAPIOptions -update-openapi rewrites it).
func TestOpenAPIOptions(t *testing.T) {
	const path = "../docs/openapi.yaml"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const start, end = "    Options:\n", "    ContextResponse:\n"
	i := strings.Index(string(doc), start)
	j := strings.Index(string(doc), end)
	k := strings.Index(string(doc)[i:], "      properties:\n")
	if i < 0 || j < i || k < 0 {
		t.Fatalf("%s: no Options schema with properties before ContextResponse", path)
	}
	k += i + len("      properties:\n")
	got, want := string(doc[k:j]), openAPIOptions()
	if got == want {
		return
	}
	if *updateOpenAPI {
		out := string(doc[:k]) + want + string(doc[j:])
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the Options properties are not assemble.OptionTable's (rerun with -update-openapi):\n got\n%s\n want\n%s", path, got, want)
}
