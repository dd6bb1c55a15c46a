package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/repoctx/repoctx"
)

// WriteTable prints the report as plain-text tables, one per metric, with a
// row per configuration and a column per setting, followed by what each
// configuration is and the notes. It returns the first write error.
func (r *Report) WriteTable(w io.Writer) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "%s-%s (%s): %d datapoints; tokens = %s; settings: full = untrimmed", r.Lang, r.Stage, r.Data, r.Datapoints, r.Tokens)
	for _, s := range r.Settings {
		switch {
		case s.Window > 0:
			fmt.Fprintf(ew, ", %s = window of %d tokens", s.Name, s.Window)
		case s.Chars > 0:
			fmt.Fprintf(ew, ", %s = at most %d bytes", s.Name, s.Chars)
		}
	}
	fmt.Fprintf(ew, " (whole lines kept from the end; windows keep %d tokens for the completion and count prefix and suffix first)\n", repoctx.MaxNewTokens)

	type metric struct {
		title string
		n     func(c *ConfigResult) int // the datapoints of the mean; nil: all
		cell  func(c *ConfigResult, s SettingScores) string
	}
	f3 := func(v float64) string { return fmt.Sprintf("%.3f", v) }
	opt3 := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return f3(*v)
	}
	metrics := []metric{
		{"idrec: share of the middle's new identifiers (not in the given prefix/suffix) found in the context; n = datapoints that have some",
			func(c *ConfigResult) int { return c.IDRecN },
			func(c *ConfigResult, s SettingScores) string { return opt3(s.IDRec) }},
		{"novelrec: share of the middle's novel identifiers (not in the datapoint's original prefix/suffix) found in the kept context; n = datapoints that have some, the same for every row",
			func(c *ConfigResult) int { return c.NovelRecN },
			func(c *ConfigResult, s SettingScores) string { return opt3(s.NovelRec) }},
		{"allrec: share of all the middle's identifiers found anywhere in the prompt (kept context + prefix + suffix, far lines cut when they overflow a window); n = datapoints with identifiers",
			func(c *ConfigResult) int { return c.AllRecN },
			func(c *ConfigResult, s SettingScores) string { return opt3(s.AllRec) }},
		{"line_chrf: best chrF of one context line against the middle's main line (upper bound of copying a line)", nil,
			func(c *ConfigResult, s SettingScores) string { return f3(s.LineChrF) }},
		{"copy_chrf: chrF of a copy completer's line (matches the last 3 prefix lines) against the middle's first line", nil,
			func(c *ConfigResult, s SettingScores) string {
				if c.Oracle {
					return "-"
				}
				return f3(s.CopyChrF)
			}},
		{"ctx_chars: context length in bytes, mean / p95", nil,
			func(c *ConfigResult, s SettingScores) string {
				if c.Oracle {
					return "-"
				}
				return fmt.Sprintf("%.0f / %.0f", s.CtxCharsMean, s.CtxCharsP95)
			}},
	}
	if r.hasModel() {
		metrics = append(metrics[:5:5], append([]metric{{"model_chrf: chrF of the model's completion against the middle (the competition's score; see notes)", nil,
			func(c *ConfigResult, s SettingScores) string {
				if s.ModelChrF == nil {
					return "-"
				}
				return f3(*s.ModelChrF)
			}}}, metrics[5:]...)...)
	}
	for _, m := range metrics {
		fmt.Fprintf(ew, "\n%s\n", m.title)
		rows := [][]string{{"config", "n"}}
		for _, s := range r.Settings {
			rows[0] = append(rows[0], s.Name)
		}
		for _, c := range r.Configs {
			n := len(c.PerDatapoint)
			if m.n != nil {
				n = m.n(c)
			}
			row := []string{c.Name, fmt.Sprint(n)}
			for _, s := range c.Scores {
				row = append(row, m.cell(c, s))
			}
			rows = append(rows, row)
		}
		writeRows(ew, rows)
	}
	r.writeHeadroom(ew)
	r.writePaired(ew)
	fmt.Fprintf(ew, "\nconfigurations:\n")
	for _, c := range r.Configs {
		failed := ""
		if c.Failed > 0 {
			failed = fmt.Sprintf(" [%d datapoints failed and were scored with an empty context]", c.Failed)
		}
		if c.ModelFailed > 0 {
			failed += fmt.Sprintf(" [%d model requests failed and scored 0]", c.ModelFailed)
		}
		fmt.Fprintf(ew, "  %s: %s%s\n", c.Name, c.About, failed)
	}
	if len(r.Notes) > 0 {
		fmt.Fprintf(ew, "notes:\n")
		for _, n := range r.Notes {
			fmt.Fprintf(ew, "  %s\n", n)
		}
	}
	return ew.err
}

// writeHeadroom prints the headroom captured, idrec / line_chrf per setting, when
// the report has it (see Headroom).
func (r *Report) writeHeadroom(w io.Writer) {
	has := false
	for _, c := range r.Configs {
		for _, s := range c.Scores {
			has = has || s.IDRecHeadroom != nil || s.LineChrFHeadroom != nil
		}
	}
	if !has {
		return
	}
	fmt.Fprintf(w, "\nheadroom captured, idrec / line_chrf: (config - %s) / (%s - %s); - where %s - %s < %.2f\n",
		ConfigBM25File, ConfigOracle, ConfigBM25File, ConfigOracle, ConfigBM25File, MinHeadroom)
	cell := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprintf("%.2f", *v)
	}
	rows := [][]string{{"config"}}
	for _, s := range r.Settings {
		rows[0] = append(rows[0], s.Name)
	}
	for _, c := range r.Configs {
		row := []string{c.Name}
		for _, s := range c.Scores {
			row = append(row, cell(s.IDRecHeadroom)+" / "+cell(s.LineChrFHeadroom))
		}
		rows = append(rows, row)
	}
	writeRows(w, rows)
}

// writePaired prints the paired comparisons, one table per metric that has any.
func (r *Report) writePaired(w io.Writer) {
	p := r.Paired
	if p == nil || len(p.Configs) == 0 {
		return
	}
	fmt.Fprintf(w, "\npaired differences against %s: mean [%.0f%% paired bootstrap interval, %d resamples of the datapoints] verdict (win: the interval lies above 0; loss: below 0; else tie); row − %s per datapoint; n = datapoints with both values\n",
		p.Reference, 100*p.Level, p.Resamples, p.Reference)
	first := true
	for _, m := range []struct {
		name string
		get  func(PairedSetting) *PairedDiff
	}{
		{"idrec", func(s PairedSetting) *PairedDiff { return s.IDRec }},
		{"novelrec", func(s PairedSetting) *PairedDiff { return s.NovelRec }},
		{"allrec", func(s PairedSetting) *PairedDiff { return s.AllRec }},
		{"line_chrf", func(s PairedSetting) *PairedDiff { return s.LineChrF }},
		{"copy_chrf", func(s PairedSetting) *PairedDiff { return s.CopyChrF }},
		{"model_chrf", func(s PairedSetting) *PairedDiff { return s.ModelChrF }},
	} {
		rows := [][]string{{m.name, "n"}}
		for _, s := range r.Settings {
			rows[0] = append(rows[0], s.Name)
		}
		any := false
		for _, c := range p.Configs {
			row := []string{c.Name, "-"}
			for _, s := range c.Settings {
				d := m.get(s)
				if d == nil {
					row = append(row, "-")
					continue
				}
				any = true
				row[1] = fmt.Sprint(d.N)
				row = append(row, fmt.Sprintf("%+.3f [%+.3f, %+.3f] %s", d.Mean, d.Lo, d.Hi, d.Verdict))
			}
			rows = append(rows, row)
		}
		if any {
			if !first {
				fmt.Fprintln(w)
			}
			first = false
			writeRows(w, rows)
		}
	}
}

// hasModel reports whether any configuration has model_chrf scores.
func (r *Report) hasModel() bool {
	for _, c := range r.Configs {
		for _, s := range c.Scores {
			if s.ModelChrF != nil {
				return true
			}
		}
	}
	return false
}

// writeRows prints rows as columns separated by two spaces, the first
// column left-aligned and the others right-aligned.
func writeRows(w io.Writer, rows [][]string) {
	var width []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], len(c))
		}
	}
	for _, r := range rows {
		var sb strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-len(c))
			if i == 0 {
				sb.WriteString(c + pad)
			} else {
				sb.WriteString("  " + pad + c)
			}
		}
		fmt.Fprintln(w, sb.String())
	}
}

// WriteJSON writes the report as one indented JSON object followed by a
// newline. It returns the first write error.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// errWriter remembers the first write error and drops later writes.
type errWriter struct {
	w   io.Writer
	err error
}

// Write writes p unless an earlier write failed.
func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return len(p), nil
	}
	n, err := e.w.Write(p)
	if err != nil {
		e.err = err
	}
	return n, err
}
