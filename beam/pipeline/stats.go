package pipeline

import (
	"context"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

// stat is one increment of the metric Name (namespace Namespace), carried as data.
//
// The counting DoFns emit their counts as stats rather than incrementing Beam
// counters themselves, and countStats turns the sums into counters in one DoFn
// call. Two reasons: the sums are exactly-once like the pipeline's output (a
// retried bundle's discarded outputs take their stats with them, where a runner's
// attempted counter values count every attempt), and a single bundle
// reports every counter, so no two bundles report a counter the runner has not
// seen yet at the same time. Prism (jobservices.metricsStore.contributeMetrics)
// keeps one pending payload per unknown metric id and overwrites it when a second
// bundle reports the same unknown id before the id is resolved: all but one of
// such bundles' increments were lost.
type stat struct {
	Name string
	N    int64
}

func init() {
	register.Emitter1[stat]()
	register.Function1x2[stat, string, int64](statKV)
	register.Function2x1[int64, int64, int64](addInt64)
	register.Function2x2[string, int64, int, stat](oneKey)
	register.DoFn3x0[context.Context, int, func(*stat) bool](&countFn{})
	register.Iter1[stat]()
}

// countStats sums the stats of the PCollections stats per name and adds each sum to
// the counter of that name (namespace Namespace), all in one DoFn call. Names
// that no stat carries get no counter.
func countStats(s beam.Scope, stats ...beam.PCollection) {
	s = s.Scope("repoctx.countStats")
	all := stats[0]
	if len(stats) > 1 {
		all = beam.Flatten(s, stats...)
	}
	sums := beam.CombinePerKey(s, addInt64, beam.ParDo(s, statKV, all))
	beam.ParDo0(s, &countFn{}, beam.GroupByKey(s, beam.ParDo(s, oneKey, sums)))
}

func statKV(st stat) (string, int64) { return st.Name, st.N }

func addInt64(a, b int64) int64 { return a + b }

// oneKey puts every sum under the same key, so one DoFn call gets them all.
func oneKey(name string, n int64) (int, stat) { return 0, stat{Name: name, N: n} }

// countFn adds the sums of all names to their counters.
type countFn struct{}

// ProcessElement increments the counter of each sum's name by the sum.
func (*countFn) ProcessElement(ctx context.Context, _ int, sums func(*stat) bool) {
	var st stat
	for sums(&st) {
		beam.NewCounter(Namespace, st.Name).Inc(ctx, st.N)
	}
}
