package assemble

import (
	"errors"
	"reflect"
	"testing"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/retrieve"
)

// TestOptionTableCoversOptions: every int, float64 and bool field of Options (Plan's
// and Fusion's included) is declared by exactly one OptionTable entry, of its kind;
// names and JSON names are unique; switches default to off.
func TestOptionTableCoversOptions(t *testing.T) {
	var o Options
	specs := map[uintptr]string{}
	names, jsons := map[string]bool{}, map[string]bool{}
	for i := range OptionTable {
		s := &OptionTable[i]
		p := reflect.ValueOf(s.field(&o))
		want := map[OptionKind]reflect.Kind{KindInt: reflect.Int, KindFloat: reflect.Float64, KindBool: reflect.Bool}[s.Kind]
		if p.Elem().Kind() != want {
			t.Errorf("%s: field of kind %v, declared %v", s.Name, p.Elem().Kind(), want)
		}
		if prev, ok := specs[p.Pointer()]; ok {
			t.Errorf("%s and %s set the same field", prev, s.Name)
		}
		specs[p.Pointer()] = s.Name
		if names[s.Name] || jsons[s.JSON] {
			t.Errorf("%s (%s) declared twice", s.Name, s.JSON)
		}
		names[s.Name], jsons[s.JSON] = true, true
		if s.Kind == KindBool && s.Default != 0 {
			t.Errorf("%s: a switch that defaults to on has no flag to turn it off", s.Name)
		}
		if s.Help == "" || (s.Kind != KindBool && s.Want == "") {
			t.Errorf("%s: no help or no Want", s.Name)
		}
		if err := s.check(s.Default); err != nil {
			t.Errorf("%s: the default is out of bounds: %v", s.Name, err)
		}
	}
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		for i := range v.NumField() {
			f, fv := v.Type().Field(i), v.Field(i)
			switch fv.Kind() {
			case reflect.Struct:
				walk(fv, path+f.Name+".")
			case reflect.Int, reflect.Float64, reflect.Bool:
				if _, ok := specs[fv.Addr().Pointer()]; !ok {
					t.Errorf("Options.%s%s has no OptionTable entry", path, f.Name)
				}
			}
		}
	}
	walk(reflect.ValueOf(&o).Elem(), "")
}

// TestPresets: PresetLive is DefaultOptions as it was spelled before the table;
// PresetBatch differs from it in exactly its documented overrides.
func TestPresets(t *testing.T) {
	want := Options{QueryLines: 8, TopK: 16, BudgetChars: 24000, SuffixWeight: 0.6, ModifiedBoost: 1.5, RelativeWeight: 1.05, RelativeLines: DefaultRelativeLines,
		EditIdentifiers: 8, DefinitionWeight: 0.9, Fusion: retrieve.DefaultWeights(), OldFileWeight: 1.2, OldFileDecay: 40,
		Plan: Plan{SuffixShare: DefaultPlanSuffixShare}, Iterations: 1, DraftQueryLines: 3, DraftWeight: 1}
	if got := DefaultOptions(); !reflect.DeepEqual(got, want) {
		t.Errorf("DefaultOptions =\n%+v, want\n%+v", got, want)
	}
	live, batch := PresetLive.Options(), PresetBatch.Options()
	var differ []string
	for i := range OptionTable {
		s := &OptionTable[i]
		if s.Get(&live) != s.Get(&batch) {
			differ = append(differ, s.Name)
		}
	}
	if !reflect.DeepEqual(differ, []string{"hit-margin", "plan-window", "plan-context-window", "iterations"}) {
		t.Errorf("the batch preset overrides %v", differ)
	}
	if batch.Plan.Window != BatchPlanWindow || batch.Plan.ContextWindow != BatchContextWindow || batch.Iterations != BatchIterations ||
		batch.HitMargin != BatchHitMargin {
		t.Errorf("batch preset: %+v", batch)
	}
}

// TestCheckGiven: the planner's settings given (other than 0) without plan-window
// are one error naming them all; given at 0, or with the planner on, they pass.
func TestCheckGiven(t *testing.T) {
	o := DefaultOptions()
	o.Plan.Share = 0.4
	given := func(n string) bool { return n == "plan-share" }
	var ne *NeedsError
	if err := o.CheckGiven(given); !errors.As(err, &ne) || err.Error() != "--plan-share, --plan-suffix-share, --plan-context-window and --prefix-outline need --plan-window above 0 (the planner is off)" {
		t.Errorf("plan-share without the planner: %v", err)
	}
	if err := DefaultOptions().CheckGiven(func(n string) bool { return n == "plan-context-window" || n == "plan-share" }); err != nil {
		t.Errorf("the planner's settings given at 0: %v", err)
	}
	o.Plan.Window = 8000
	if err := o.CheckGiven(given); err != nil {
		t.Errorf("with the planner on: %v", err)
	}
	o.TopK = 0
	var oe *repoctx.OptionError
	if err := o.CheckGiven(given); !errors.As(err, &oe) || oe.Option != "top-k" {
		t.Errorf("top-k 0: %v", err)
	}
}
