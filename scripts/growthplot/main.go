// Command growthplot draws the report of scripts/growth.sh as an SVG chart: against
// the number of source files, the wall times (index, one-shot query, serve start), the
// peak RSS (index, one-shot query, serve) with the cache's size on disk, and serve's
// p50/p95/p99 latency (planner off and plan_window 8000). Both axes of every panel are
// logarithmic, so a straight line of slope 1 is linear growth. The fonts are embedded
// (gonum/plot's vgsvg.EmbedFonts).
//
// Usage (from the repository root):
//
//	sh scripts/growth.sh CORPUS 1000 5000 20000 50000 > growth.txt
//	go run ./scripts/growthplot -o growth.svg < growth.txt
//
// It exits 1 naming the line when a report line cannot be read.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/repoctx/repoctx/internal/atomicfile"
)

// row holds one size's figures: series name to value (seconds, MB or ms).
type row map[string]float64

// patterns read growth.sh's lines; each names its values in order.
// A value is any run of non-blank characters (empty when growth.sh's awk found no
// metric), so that a line of a known kind with a bad value is an error, not skipped.
// A benchmark's name ends in -GOMAXPROCS unless that is 1.
var patterns = []struct {
	re    *regexp.Regexp
	names []string
}{
	{regexp.MustCompile(`^(\d+) index wall (\S*) s, CPU \S* s, peak RSS (\S*) MB, cache (\S*) MB`),
		[]string{"index wall", "index RSS", "cache on disk"}},
	{regexp.MustCompile(`^(\d+) query wall (\S*) s, CPU \S* s, peak RSS (\S*) MB`),
		[]string{"query wall", "query RSS"}},
	{regexp.MustCompile(`^(\d+) serve start (\S*) s`), []string{"serve start"}},
	{regexp.MustCompile(`^(\d+) serve BenchmarkServe/context/plan_window=0(?:-\d+)? p50 (\S*) ms, p95 (\S*) ms, p99 (\S*) ms`),
		[]string{"p50, planner off", "p95, planner off", "p99, planner off"}},
	{regexp.MustCompile(`^(\d+) serve BenchmarkServe/context/plan_window=8000(?:-\d+)? p50 (\S*) ms, p95 (\S*) ms, p99 (\S*) ms`),
		[]string{"p50, plan_window 8000", "p95, plan_window 8000", "p99, plan_window 8000"}},
	{regexp.MustCompile(`^(\d+) serve peak RSS (\S*) MB`), []string{"serve RSS"}},
}

// read parses a growth.sh report: the figures of each size. Lines matching no pattern
// (the build's output, blank lines) are skipped; a matching line with a value that is
// not a finite number >= 0 is an error naming it. A later line of a size and kind
// replaces an earlier one (a size run again, its report appended).
func read(r io.Reader) (map[int]row, error) {
	rows := map[int]row{}
	sc := bufio.NewScanner(r)
	for ln := 1; sc.Scan(); ln++ {
		line := strings.TrimSpace(sc.Text())
		for _, p := range patterns {
			m := p.re.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			n, err := strconv.Atoi(m[1])
			if err != nil || n <= 0 {
				return nil, fmt.Errorf("line %d: %q: file count %q", ln, line, m[1])
			}
			if rows[n] == nil {
				rows[n] = row{}
			}
			for i, name := range p.names {
				v, err := strconv.ParseFloat(m[i+2], 64)
				if err == nil && (math.IsInf(v, 0) || math.IsNaN(v) || v < 0) {
					err = errors.New("not a finite number >= 0")
				}
				if err != nil {
					return nil, fmt.Errorf("line %d: %q: %s %q: %v", ln, line, name, m[i+2], err)
				}
				rows[n][name] = v
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("no growth.sh report lines in the input")
	}
	return rows, nil
}

// panel draws the named series against the file counts, log-log, with a labelled tick
// at every file count of the report. Values of 0 cannot
// be drawn on a log scale and are left out; a panel left without any value is drawn
// empty, titled "(no data)".
func panel(rows map[int]row, title, unit string, series []string) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "source files"
	p.Y.Label.Text = unit
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	p.Legend.Top, p.Legend.Left = true, true
	var sizes []int
	for n := range rows {
		sizes = append(sizes, n)
	}
	sort.Ints(sizes)
	var xt plot.ConstantTicks // a labelled tick at every size measured
	for _, n := range sizes {
		xt = append(xt, plot.Tick{Value: float64(n), Label: strconv.Itoa(n)})
	}
	p.X.Tick.Marker = xt
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for i, name := range series {
		var xy plotter.XYs
		for _, n := range sizes {
			if v, ok := rows[n][name]; ok && v > 0 {
				xy = append(xy, plotter.XY{X: float64(n), Y: v})
				ymin, ymax = min(ymin, v), max(ymax, v)
			}
		}
		if len(xy) == 0 {
			continue
		}
		l, s, err := plotter.NewLinePoints(xy)
		if err != nil {
			return nil, err
		}
		c := palette[i%len(palette)]
		l.Color, s.Color = c, c
		if strings.Contains(name, "8000") {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		p.Add(l, s)
		p.Legend.Add(name, l, s)
	}
	// A log axis needs a range above 0: gonum widens a one-value range by ±1 (and an
	// empty one to [-1, 1]), which would reach 0 or below.
	if ymin > ymax {
		p.Title.Text += " (no data)"
		ymin, ymax = 1, 10
	}
	if ymin == ymax {
		ymin, ymax = ymin/2, ymax*2
	}
	p.Y.Min, p.Y.Max = ymin, ymax
	p.X.Min, p.X.Max = float64(sizes[0]), float64(sizes[len(sizes)-1])
	if sizes[0] == sizes[len(sizes)-1] {
		p.X.Min, p.X.Max = p.X.Min/2, p.X.Max*2
	}
	return p, nil
}

var palette = []color.Color{
	color.NRGBA{31, 119, 180, 255}, color.NRGBA{255, 127, 14, 255}, color.NRGBA{44, 160, 44, 255},
	color.NRGBA{214, 39, 40, 255}, color.NRGBA{148, 103, 189, 255}, color.NRGBA{140, 86, 75, 255},
}

// drawChart lays the three panels side by side and returns the SVG.
func drawChart(rows map[int]row) ([]byte, error) {
	times, err := panel(rows, "time", "seconds (wall)", []string{"index wall", "query wall", "serve start"})
	if err != nil {
		return nil, err
	}
	mem, err := panel(rows, "memory and disk", "MB", []string{"index RSS", "query RSS", "serve RSS", "cache on disk"})
	if err != nil {
		return nil, err
	}
	lat, err := panel(rows, "serve latency, 500 holes", "ms", []string{
		"p50, planner off", "p95, planner off", "p99, planner off",
		"p50, plan_window 8000", "p95, plan_window 8000", "p99, plan_window 8000"})
	if err != nil {
		return nil, err
	}
	cv := vgsvg.NewWith(vgsvg.UseWH(15*vg.Inch, 5*vg.Inch), vgsvg.EmbedFonts(true))
	tiles := draw.Tiles{Rows: 1, Cols: 3, PadX: vg.Millimeter * 8, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 3, PadBottom: vg.Millimeter * 3, PadLeft: vg.Millimeter * 3, PadRight: vg.Millimeter * 3}
	plots := [][]*plot.Plot{{times, mem, lat}}
	canvases := plot.Align(plots, tiles, draw.New(cv))
	for j, p := range plots[0] {
		p.Draw(canvases[0][j])
	}
	var buf bytes.Buffer
	if _, err := cv.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func main() {
	out := flag.String("o", "growth.svg", "the SVG file to write")
	flag.Parse()
	rows, err := read(os.Stdin)
	if err == nil {
		var svg []byte
		if svg, err = drawChart(rows); err == nil {
			err = atomicfile.WriteFile(*out, svg, atomicfile.Options{})
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "growthplot:", err)
		os.Exit(1)
	}
}
