package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/repoctx/repoctx/store"
)

// cacheSizeFlag caps the cache directory; commands that fill the cache apply it when
// they finish (store.GC).
var cacheSizeFlag = &cli.StringFlag{Name: "cache-max-size", Value: formatSize(store.DefaultCacheMaxBytes),
	Usage: "`size` cap of the cache directory (e.g. 5GB, 500MB; 0 = no cap): least recently used repositories are evicted when a command ends, never one another process has open"}

// parseSize reads a size such as "5GB", "500MB", "64KiB" or "1048576" (bytes). Decimal
// (KB, MB, GB, TB) and binary (KiB, MiB, GiB, TiB) units are accepted. Infinity, a
// size of 2^63 bytes or more and a positive size under one byte are errors (they
// would otherwise become 0, no cap).
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"B", 1}}
	mult := 1.0
	for _, u := range units {
		if strings.HasSuffix(strings.ToUpper(t), strings.ToUpper(u.suffix)) && (u.suffix != "B" || len(t) > 1) {
			t, mult = strings.TrimSpace(t[:len(t)-len(u.suffix)]), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 || v != v || math.IsInf(v, 0) {
		return 0, fmt.Errorf("not a size: %q (e.g. 5GB, 500MB, 0)", s)
	}
	n := v * mult
	switch {
	case n >= 1<<63: // int64(n) would overflow (to a negative size: no cap)
		return 0, fmt.Errorf("size %q is too large (at most 8EiB; 0 means no cap)", s)
	case n > 0 && n < 1: // would round to 0, which means no cap
		return 0, fmt.Errorf("size %q is less than one byte (0 means no cap)", s)
	}
	return int64(n), nil
}

// formatSize writes bytes with a binary unit, as parseSize reads it.
func formatSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n >= 1<<30:
		return fmt.Sprintf("%.1fGiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1fMiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1fKiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}

// cacheGC applies --cache-max-size to --cache-dir after a command; what it evicts is
// reported on stderr. A failed GC only leaves the cache as it is.
func cacheGC(c *cli.Context) {
	max, err := parseSize(c.String("cache-max-size"))
	if err != nil || max == 0 {
		return
	}
	res, err := store.GC(c.String("cache-dir"), max)
	if err == nil && len(res.Evicted) > 0 && !c.Bool("quiet") {
		fmt.Fprintf(c.App.ErrWriter, "cache over %s: evicted %d repositories (%s), freed %s\n",
			formatSize(max), len(res.Evicted), strings.Join(res.Evicted, ", "), formatSize(res.Freed))
	}
}

// checkCacheSize refuses a bad --cache-max-size before any work.
func checkCacheSize(c *cli.Context) error {
	if _, err := parseSize(c.String("cache-max-size")); err != nil {
		return usagef("--cache-max-size: %v", err)
	}
	return nil
}

// cacheCmd is `repoctx cache stats|gc|clear`.
func cacheCmd() *cli.Command {
	dir := &cli.StringFlag{Name: "cache-dir", Value: store.DefaultCacheDir(), Usage: "cache `directory`"}
	return &cli.Command{
		Name:  "cache",
		Usage: "show, trim or empty the cache directory (chunks, symbols, vectors and models per repository)",
		Subcommands: []*cli.Command{
			{
				Name:  "stats",
				Usage: "print the cache's size and its repositories, least recently used first",
				Flags: []cli.Flag{dir},
				Action: func(c *cli.Context) error {
					cs, err := store.Stat(c.String("cache-dir"))
					if err != nil {
						return err
					}
					w := c.App.Writer
					fmt.Fprintf(w, "cache %s: %s in %d repositories", cs.Dir, formatSize(cs.Bytes), len(cs.Repos))
					if cs.OldBytes > 0 {
						fmt.Fprintf(w, "; %s of older formats (removed by gc)", formatSize(cs.OldBytes))
					}
					if cs.Temps > 0 {
						fmt.Fprintf(w, "; %d temporary files", cs.Temps)
					}
					fmt.Fprintln(w)
					for _, r := range cs.Repos {
						use := ""
						if r.InUse {
							use = ", in use"
						}
						if r.Damaged > 0 {
							use += fmt.Sprintf(", %d damaged segments (never read; removed when gc merges this repository's segments)", r.Damaged)
						}
						fmt.Fprintf(w, "  %-40s %10s  %3d segments%s  used %s%s\n", r.ID, formatSize(r.Bytes), r.Segments, indexNote(r.IndexBytes), r.LastUsed.Format(time.DateTime), use)
					}
					return nil
				},
			},
			{
				Name:  "gc",
				Usage: "remove leftovers of killed runs and older formats, merge segments, and evict least recently used repositories down to --cache-max-size",
				Flags: []cli.Flag{dir, cacheSizeFlag},
				Action: func(c *cli.Context) error {
					max, err := parseSize(c.String("cache-max-size"))
					if err != nil {
						return usagef("--cache-max-size: %v", err)
					}
					res, err := store.GC(c.String("cache-dir"), max)
					if err != nil {
						return err
					}
					printGC(c, res)
					return nil
				},
			},
			{
				Name:  "clear",
				Usage: "remove every repository no process has open, and older formats",
				Flags: []cli.Flag{dir},
				Action: func(c *cli.Context) error {
					res, err := store.Clear(c.String("cache-dir"))
					if err != nil {
						return err
					}
					printGC(c, res)
					return nil
				},
			},
		},
	}
}

func printGC(c *cli.Context, res store.GCResult) {
	w := c.App.Writer
	fmt.Fprintf(w, "freed %s: evicted %d repositories, merged the segments of %d\n", formatSize(res.Freed), len(res.Evicted), res.Compacted)
	for _, id := range res.Evicted {
		fmt.Fprintf(w, "  evicted %s\n", id)
	}
	for _, id := range res.Kept {
		fmt.Fprintf(w, "  kept %s (in use)\n", id)
	}
}

// indexNote says how much of a repository's size its search indexes (cross-repository
// bleve indexes) take, or "" when it has none.
func indexNote(n int64) string {
	if n == 0 {
		return ""
	}
	return ", search indexes " + formatSize(n)
}
