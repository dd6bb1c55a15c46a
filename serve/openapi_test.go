package serve

import (
	"flag"
	"fmt"
	"math"
	"os"
	"regexp"
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

// TestOpenAPIRoutes: every route the server registers (server.go's mux patterns,
// "METHOD /path") is a path of docs/openapi.yaml with that method.
func TestOpenAPIRoutes(t *testing.T) {
	src, err := os.ReadFile("server.go")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../docs/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	paths := map[string]string{} // path -> its block of the document
	var cur string
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(line, "  /") && strings.HasSuffix(line, ":") {
			cur = strings.TrimSuffix(strings.TrimSpace(line), ":")
			paths[cur] = ""
			continue
		}
		if cur != "" && (line == "" || line[0] != ' ') {
			cur = ""
		}
		if cur != "" {
			paths[cur] += line + "\n"
		}
	}
	routes := regexp.MustCompile(`mux\.HandleFunc\("(GET|POST|PUT|DELETE) (/[^"]*)"`).FindAllStringSubmatch(string(src), -1)
	if len(routes) < 8 {
		t.Fatalf("found %d routes in server.go; the pattern no longer matches", len(routes))
	}
	for _, r := range routes {
		method, path := strings.ToLower(r[1]), strings.TrimSuffix(r[2], "{$}")
		block, ok := paths[path]
		if !ok {
			t.Errorf("docs/openapi.yaml has no path %s (%s in server.go)", path, r[0])
			continue
		}
		if !strings.Contains(block, "\n    "+method+":") && !strings.HasPrefix(block, "    "+method+":") {
			t.Errorf("docs/openapi.yaml's %s has no %s operation", path, method)
		}
	}
}
