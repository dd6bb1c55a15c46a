package dataset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/repoctx/repoctx/assemble"
)

// journalFormat is the version of a prediction journal's header: 2 records the
// options as a JSON object (Fingerprint); version 1 (no "format" field) recorded
// them as Go's %+v text, which a resume refuses.
const journalFormat = 2

// object is a JSON object whose members keep their order.
type object []member

type member struct {
	key   string
	value any // marshalled with encoding/json; json.RawMessage as it is
}

// MarshalJSON writes the members in order.
func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		v, err := json.Marshal(m.value)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.key, err)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// optionsObject records the assembly options of c by assemble.OptionTable's JSON
// names, then those the table leaves out (languages).
func optionsObject(c assemble.Options) object {
	var out object
	for i := range assemble.OptionTable {
		s := &assemble.OptionTable[i]
		v := s.Get(&c)
		text := s.Format(v)
		if s.Kind == assemble.KindFloat && (math.IsNaN(v) || math.IsInf(v, 0)) {
			text = strconv.Quote(text) // not a JSON number
		}
		out = append(out, member{s.JSON, json.RawMessage(text)})
	}
	return append(out, member{"languages", c.Languages})
}

// structObject records the exported fields of the struct v by their Go names:
// nested structs as objects, functions and channels left out, other values as
// encoding/json writes them (a fmt.Stringer's text for named scalar types, %+v when
// encoding/json cannot write one).
func structObject(v reflect.Value) object {
	var out object
	t := v.Type()
	for i := range t.NumField() {
		f, fv := t.Field(i), v.Field(i)
		if !f.IsExported() {
			continue
		}
		switch fv.Kind() {
		case reflect.Func, reflect.Chan, reflect.UnsafePointer:
			continue
		case reflect.Struct:
			out = append(out, member{f.Name, structObject(fv)})
			continue
		}
		val := fv.Interface()
		if s, ok := val.(fmt.Stringer); ok && fv.Kind() != reflect.Interface && fv.Kind() != reflect.Pointer && fv.Kind() != reflect.Slice && fv.Kind() != reflect.Map {
			val = s.String()
		} else if _, err := json.Marshal(val); err != nil {
			val = fmt.Sprintf("%+v", val)
		}
		out = append(out, member{f.Name, val})
	}
	return out
}

// optionLeaves flattens a JSON object into its leaf values by dotted path
// ("compose.top_k"), each as compact JSON text. A text that is not a JSON object is
// one leaf named "".
func optionLeaves(raw []byte) map[string]string {
	out := map[string]string{}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		out[""] = string(raw)
		return out
	}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if m, ok := v.(map[string]any); ok && len(m) > 0 {
			for k, x := range m {
				walk(strings.TrimPrefix(prefix+"."+k, "."), x)
			}
			return
		}
		b, _ := json.Marshal(v)
		out[prefix] = string(b)
	}
	walk("", v)
	return out
}

// optionDiff names the options that differ between two option records written by
// [Fingerprint] (JSON objects), skipping the members named in skip: "compose.top_k
// 3 (journal) vs 16 (this run), ...", in path order, at most 8 of them. It returns
// "" when they hold the same values.
func optionDiff(journal, now []byte, skip ...string) string {
	a, b := optionLeaves(journal), optionLeaves(now)
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var sorted []string
	for k := range keys {
		if !contains(skip, k) {
			sorted = append(sorted, k)
		}
	}
	sort.Strings(sorted)
	var diffs []string
	for _, k := range sorted {
		x, okx := a[k]
		y, oky := b[k]
		if okx && oky && x == y {
			continue
		}
		if len(diffs) == 8 {
			diffs = append(diffs, "...")
			break
		}
		diffs = append(diffs, fmt.Sprintf("%s %s (journal) vs %s (this run)", k, leafText(x, okx), leafText(y, oky)))
	}
	return strings.Join(diffs, ", ")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// leafText is a leaf's value for a message: a JSON string without its quotes
// (unless empty), other values as JSON, "absent" when missing.
func leafText(v string, ok bool) string {
	if !ok {
		return "absent"
	}
	if s, err := strconv.Unquote(v); err == nil && s != "" && strings.HasPrefix(v, `"`) {
		return s
	}
	return v
}
