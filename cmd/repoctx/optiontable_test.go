package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/repoctx/repoctx/assemble"
	"github.com/repoctx/repoctx/batch"
	"github.com/repoctx/repoctx/eval"
	"github.com/repoctx/repoctx/serve"
)

// TestOptionTableEverywhere walks assemble.OptionTable: every option is a flag of
// the commands that compose (with the defaults of the command's preset), a field of
// serve's request options (the server's default the live preset's), a flag in
// eval's configuration text (with predict's default) and a tuning parameter; and
// no package spells an option's name itself (flags, JSON fields, parameters must
// come from the table).
func TestOptionTableEverywhere(t *testing.T) {
	commands := []struct {
		cmd    *cli.Command
		preset assemble.Preset
	}{{predictCmd(), assemble.PresetBatch}, {evalCmd(), assemble.PresetBatch}, {compareCmd(), assemble.PresetBatch},
		{queryCmd(), assemble.PresetLive}, {serveCmd(), assemble.PresetLive}, {completeCmd(), assemble.PresetLive}}
	serveDef := serve.DefaultConfig().Compose
	var batchCfg = batch.DefaultConfig()
	for i := range assemble.OptionTable {
		s := &assemble.OptionTable[i]
		if s.Kind == assemble.KindBool {
			s.Set(&batchCfg.Compose, 1)
		}
	}
	evalText := " " + eval.ConfigFlags(batchCfg) + " "
	for i := range assemble.OptionTable {
		s := &assemble.OptionTable[i]
		for _, c := range commands {
			def := c.preset.Default(s)
			var f cli.Flag
			for _, g := range c.cmd.Flags {
				if g.Names()[0] == s.Name {
					f = g
				}
			}
			ok := false
			switch g := f.(type) {
			case *cli.IntFlag:
				ok = s.Kind == assemble.KindInt && g.Value == int(def) && g.Usage == s.FlagHelp()
			case *cli.Float64Flag:
				ok = s.Kind == assemble.KindFloat && g.Value == def && g.Usage == s.FlagHelp()
			case *cli.BoolFlag:
				ok = s.Kind == assemble.KindBool && !g.Value && def == 0 && g.Usage == s.FlagHelp()
			}
			if !ok {
				t.Errorf("%s --%s: flag %#v, want a flag of kind %v, default %v (the %s preset), the table's help", c.cmd.Name, s.Name, f, s.Kind, def, c.preset.Name())
			}
		}
		// serve: the JSON field reads the value; the server starts from the live default.
		var req serve.ContextRequest
		v := s.Format(s.Default)
		if err := json.Unmarshal([]byte(fmt.Sprintf(`{"path": "a.kt", "options": {%q: %s}}`, s.JSON, v)), &req); err != nil || req.Options[s.JSON] != s.Default {
			t.Errorf("serve options.%s = %s: %v, %v", s.JSON, v, req.Options, err)
		}
		if got := s.Get(&serveDef); got != assemble.PresetLive.Default(s) {
			t.Errorf("serve's default %s = %v, want %v", s.JSON, got, assemble.PresetLive.Default(s))
		}
		// eval: the configuration text names the option with predict's default.
		want := " --" + s.Name + " "
		if s.Kind != assemble.KindBool {
			want += s.Format(assemble.PresetBatch.Default(s)) + " "
		}
		if !strings.Contains(evalText, want) {
			t.Errorf("eval.ConfigFlags has no %q", want)
		}
	}
	// tune: its parameters are the table's, from predict's preset.
	tune, err := os.ReadFile("../../scripts/tune/main.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"assemble.Option(name)", "assemble.PresetBatch.Options()"} {
		if !strings.Contains(string(tune), want) {
			t.Errorf("scripts/tune/main.go does not take its parameters from the table (no %s)", want)
		}
	}
	// Nowhere else: no Go source outside assemble spells an option's flag or JSON name
	// as a string literal (comments and tests aside).
	err = filepath.WalkDir("../..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "assemble" && filepath.Dir(p) == "../.." || strings.HasPrefix(d.Name(), ".") && p != "../..") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for n, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "//") {
				continue
			}
			for i := range assemble.OptionTable {
				s := &assemble.OptionTable[i]
				for _, lit := range []string{`"` + s.Name + `"`, `"--` + s.Name + `"`, `"` + s.JSON + `"`, `json:"` + s.JSON} {
					if strings.Contains(line, lit) {
						t.Errorf("%s:%d spells option %s itself (%s): take it from assemble.OptionTable", p, n+1, s.Name, lit)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
