package preprocess

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/snapshot"
)

// Stats describe what Run did.
type Stats struct {
	// Langs counts the files written, by language ("" for text of no registered
	// language).
	Langs map[string]*LangStats
	// Walked are the walker's counts over all folders, with the walked files the
	// decoder refused (binary, too large) moved from files to skipped.
	Walked snapshot.WalkStats
	// Folders is the number of inputs that were folders.
	Folders int
	// Named is the number of inputs chunked as named files; Failed of them could not
	// be read or chunked, or were refused (see Options.OnFailure).
	Named, Failed int
	// Wall is the wall time of chunking and writing.
	Wall time.Duration
	// Workers is the number of workers Run used.
	Workers int
}

// LangStats count the files of one language that Run wrote.
type LangStats struct {
	// Files and Chunks count files and their chunks; Fallback the chunks that are
	// fallback windows, TokenWindows those of them cut inside string literals or
	// comments (with Options.Diagnose); Unnamed the chunks of a definition kind
	// (function, class, property) that carry no name (a grammar error cost the
	// definition its name).
	Files, Chunks, Fallback, TokenWindows, Unnamed int
	// Bytes is the files' raw size in bytes.
	Bytes int64
	// Dur is the decoding and chunking time, summed over workers.
	Dur time.Duration
	// ParseErrors lists the paths of files with a chunk flagged parse_error.
	ParseErrors []string
	// Limited lists "limit: path" for each file windowed at a limit (chunker.Limit).
	Limited []string
}

func (s *LangStats) add(r result) {
	s.Files++
	s.Chunks += len(r.chunks)
	s.Bytes += int64(r.raw)
	s.Dur += r.dur
	s.TokenWindows += r.tokenWindows
	for _, k := range r.chunks {
		if k.Fallback {
			s.Fallback++
		}
		if k.Name == "" && (k.Kind == chunker.KindFunction || k.Kind == chunker.KindClass || k.Kind == chunker.KindProperty) {
			s.Unnamed++
		}
	}
	if slices.ContainsFunc(r.chunks, func(k chunker.Chunk) bool { return k.ParseError }) {
		s.ParseErrors = append(s.ParseErrors, r.path)
	}
	if l := chunker.FileLimit(r.chunks); l != chunker.LimitNone {
		s.Limited = append(s.Limited, string(l)+": "+r.path)
	}
}

// Total sums Langs over the languages (Dur is then the summed worker time).
func (st Stats) Total() LangStats {
	var t LangStats
	for _, s := range st.Langs {
		t.Files += s.Files
		t.Chunks += s.Chunks
		t.Fallback += s.Fallback
		t.TokenWindows += s.TokenWindows
		t.Unnamed += s.Unnamed
		t.Bytes += s.Bytes
		t.Dur += s.Dur
		t.ParseErrors = append(t.ParseErrors, s.ParseErrors...)
		t.Limited = append(t.Limited, s.Limited...)
	}
	return t
}

// PrintTable writes the statistics table (`repoctx chunk --stats`): per language,
// files, chunks, files with parse errors, the share of chunks that are fallback
// windows and, in parentheses, the share of chunks that are fallback windows cut
// only inside string literals or comments (a diagnostic: they stay fallback;
// structural strategy, Options.Diagnose), the definition chunks without a name
// (LangStats.Unnamed), raw MB and throughput (raw MB per second
// of one worker's decoding and chunking time); the total line's MB/s is over wall
// time with all workers. A line after the table counts the files windowed at a
// limit (chunker.Limit) by limit; with verbose, each such file and each file with
// parse errors follows on a line of its own.
func (st Stats) PrintTable(w io.Writer, verbose bool) {
	total := st.Total()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	langs := slices.Sorted(maps.Keys(st.Langs))
	names := map[string]string{}
	width := len("language")
	for _, l := range langs {
		names[l] = cmp.Or(l, "(other)")
		width = max(width, len(names[l]))
	}
	totalName := fmt.Sprintf("total (wall, %d workers)", st.Workers)
	width = max(width, len(totalName))
	fmt.Fprintf(tw, "%-*s\tfiles\tchunks\tparse-error files\tfallback (in strings/comments)\tunnamed defs\tMB\tMB/s\t\n", width, "language")
	row := func(name string, s LangStats, secs float64) {
		fmt.Fprintf(tw, "%-*s\t%d\t%d\t%d\t%.1f%% (%.1f%%)\t%d\t%.2f\t%.2f\t\n", width, name, s.Files, s.Chunks, len(s.ParseErrors),
			100*float64(s.Fallback)/float64(max(1, s.Chunks)), 100*float64(s.TokenWindows)/float64(max(1, s.Chunks)),
			s.Unnamed, float64(s.Bytes)/1e6, float64(s.Bytes)/1e6/max(secs, 1e-9))
	}
	for _, l := range langs {
		row(names[l], *st.Langs[l], st.Langs[l].Dur.Seconds())
	}
	row(totalName, total, st.Wall.Seconds())
	tw.Flush()
	sort.Strings(total.Limited)
	if len(total.Limited) > 0 {
		by := map[string]int{}
		for _, l := range total.Limited {
			by[l[:strings.IndexByte(l, ':')]]++
		}
		var parts []string
		for _, l := range slices.Sorted(maps.Keys(by)) {
			parts = append(parts, fmt.Sprintf("%s %d", l, by[l]))
		}
		fmt.Fprintf(w, "windowed at a limit: %d files (%s)\n", len(total.Limited), strings.Join(parts, ", "))
	}
	if verbose {
		for _, l := range total.Limited {
			fmt.Fprintf(w, "limit %s\n", l)
		}
		sort.Strings(total.ParseErrors)
		for _, p := range total.ParseErrors {
			fmt.Fprintf(w, "parse errors: %s\n", p)
		}
	}
}
