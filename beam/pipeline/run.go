package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// Counters are a run's metrics of Namespace by name, summed over steps.
type Counters map[string]int64

// Run builds a pipeline with build and runs it on the runner named runner ("":
// "prism", Beam's local runner, embedded in the process), which the caller must have
// registered by importing its package (beamx imports them all). It returns the
// counters of Namespace.
func Run(ctx context.Context, runner string, build func(s beam.Scope) error) (Counters, error) {
	p, s := beam.NewPipelineWithRoot()
	if err := build(s); err != nil {
		return nil, err
	}
	pr, err := beam.Run(ctx, cmp.Or(runner, "prism"), p)
	if err != nil {
		return nil, err
	}
	c := Counters{}
	if pr == nil { // a runner that reports no metrics
		return c, nil
	}
	for _, r := range pr.Metrics().AllMetrics().Counters() {
		if r.Namespace() == Namespace {
			c[r.Name()] += r.Result()
		}
	}
	return c, nil
}

// PrintPreprocessSummary writes the preprocessing run's summary table from its
// counters: per language (and the total) files, chunks and raw MB; then the
// repositories, duplicates, walker skips by reason and shards written.
func PrintPreprocessSummary(w io.Writer, c Counters) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "language\tfiles\tchunks\tMB\t\n")
	var langs []string
	for k := range maps.Keys(c) {
		if l, ok := strings.CutPrefix(k, "files/"); ok {
			langs = append(langs, l)
		}
	}
	slices.Sort(langs)
	for _, l := range langs {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.2f\t\n", l, c["files/"+l], c["chunks/"+l], float64(c["bytes/"+l])/1e6)
	}
	fmt.Fprintf(tw, "total\t%d\t%d\t%.2f\t\n", c["files"], c["chunks"], float64(c["bytes"])/1e6)
	tw.Flush()
	fmt.Fprintf(w, "repositories %d; fallback chunks %d; files with parse errors %d\n", c["repositories"], c["fallback"], c["parse_error_files"])
	fmt.Fprintf(w, "duplicates: %d files, %d chunks (duplicate_of set)", c["duplicate_files"], c["duplicate_chunks"])
	if c["rows_dropped"] > 0 {
		fmt.Fprintf(w, ", %d rows dropped", c["rows_dropped"])
	}
	fmt.Fprintln(w)
	var skips []string
	for k := range maps.Keys(c) {
		if r, ok := strings.CutPrefix(k, "skipped/"); ok {
			skips = append(skips, fmt.Sprintf("%s %d", r, c[k]))
		}
	}
	slices.Sort(skips)
	if len(skips) > 0 {
		fmt.Fprintf(w, "skipped: %s\n", strings.Join(skips, ", "))
	}
	fmt.Fprintf(w, "wrote %d rows in %d shards\n", c["rows_written"], c["shards"])
}
