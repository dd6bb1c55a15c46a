package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/repoctx/repoctx/internal/benchrepo"
	"github.com/repoctx/repoctx/retrieve"
	"github.com/repoctx/repoctx/retrieve/hugot"
)

// BenchmarkServe measures `repoctx serve` on the repository in $REPOCTX_BENCH_REPO
// (docs/performance.md uses the first 1,000 Kotlin files of ktorio/ktor at ef92e55) over HTTP on
// a loopback listener:
//
//   - first-view: the first view with an empty cache (cold-ms), and again in the same
//     process (reopen-ms: the repository's index is still in memory);
//   - context: POST /v1/context latency over 500 random holes (a random line of a
//     random file, cut at a random column; the file's text is the indexed one),
//     hybrid retrieval with the built-in LSA,
//     planner off and plan_window 8000 (characters/4): p50-ms, p95-ms, p99-ms, max-ms, and
//     the process's CPU time per request (cpu-ms/req, client included when the server
//     runs in-process);
//   - context-edited: the same holes less a middle (the rest of the cursor's line and
//     up to two more lines), so that the request's text is not the indexed one and the
//     completion file is parsed, as on a file being typed;
//   - update: 20 saves of a file with a new function each; seen-ms is the median time
//     from the write until a hole calling the function gets its definition (polling
//     POST /v1/context every 2 ms), update-ms the median of the server's own time
//     for the update (walk + view, GET /v1/status's last_update_ms).
//
// The server runs in the test process on a copy of the repository, unless
// $REPOCTX_BENCH_URL names a running `repoctx serve` of $REPOCTX_BENCH_REPO itself
// (its file is edited and restored): scripts/serve-bench.sh does that and reads the
// server's peak RSS. $REPOCTX_BENCH_MODEL names a model folder (e.g.
// testdata/models/tiny-bert) for an in-process server embedding with it;
// $REPOCTX_BENCH_LOG=1 shows the server's log. Run:
//
//	REPOCTX_BENCH_REPO=/tmp/ktor1k go test ./serve/ -run '^$' -bench Serve -benchtime 1x
func BenchmarkServe(b *testing.B) {
	root, paths := benchrepo.Paths(b)
	base := os.Getenv("REPOCTX_BENCH_URL")
	dir := root
	if base == "" {
		dir = benchrepo.Subset(b, root, paths, len(paths))
		cfg := DefaultConfig()
		cfg.CacheDir = b.TempDir()
		if os.Getenv("REPOCTX_BENCH_LOG") != "" {
			cfg.Log = os.Stderr
		}
		if m := os.Getenv("REPOCTX_BENCH_MODEL"); m != "" {
			emb, err := hugot.New(m, hugot.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer emb.Close()
			cfg.Index.Dense, cfg.Index.Embedder = retrieve.DenseModel, emb
		}
		// The first view with an empty cache, then again in the same process.
		var srv *Server
		var firstMS [2]int64
		for i := range firstMS {
			if srv != nil {
				srv.Close()
			}
			t := time.Now()
			var err error
			if srv, err = New(context.Background(), []Folder{{Dir: dir}}, cfg); err != nil {
				b.Fatal(err)
			}
			firstMS[i] = time.Since(t).Milliseconds()
		}
		defer srv.Close()
		b.Run("first-view", func(b *testing.B) {
			b.ReportMetric(float64(firstMS[0]), "cold-ms")
			b.ReportMetric(float64(firstMS[1]), "reopen-ms")
			st := srv.ws[0].Status()
			b.ReportMetric(float64(st.Files), "files")
			b.ReportMetric(float64(st.Chunks), "chunks")
		})
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go srv.Serve(ctx, ln)
		base = "http://" + ln.Addr().String()
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	post := func(body any) (ContextResponse, time.Duration) {
		raw, _ := json.Marshal(body)
		t := time.Now()
		resp, err := client.Post(base+"/v1/context", "application/json", bytes.NewReader(raw))
		if err != nil {
			b.Fatal(err)
		}
		var out ContextResponse
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		d := time.Since(t)
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("status %d: %v", resp.StatusCode, err)
		}
		return out, d
	}
	status := func() Status {
		resp, err := client.Get(base + "/v1/status")
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		var st StatusResponse
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || len(st.Workspaces) != 1 {
			b.Fatalf("status: %v", err)
		}
		return st.Workspaces[0]
	}
	// 500 random holes, the same for both settings.
	rng := rand.New(rand.NewPCG(13, 13))
	type hole struct{ path, prefix, suffix, rest string } // rest: suffix less the middle
	var holes []hole
	for len(holes) < 500 {
		p := paths[rng.IntN(len(paths))]
		raw, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil || len(raw) == 0 {
			continue
		}
		lines := strings.SplitAfter(string(raw), "\n")
		l := rng.IntN(len(lines))
		cut := len(strings.Join(lines[:l], ""))
		if n := len(strings.TrimRight(lines[l], "\n")); n > 0 {
			cut += rng.IntN(n)
		}
		for cut > 0 && cut < len(raw) && raw[cut]&0xC0 == 0x80 {
			cut--
		}
		holes = append(holes, hole{path: p, prefix: string(raw[:cut]), suffix: string(raw[cut:])})
	}
	// The edited holes: the same, less a middle of the cursor line's rest and up to two
	// more lines (a completion request on a file being typed: its text is not the
	// indexed one). Drawn from a generator of their own, so the holes above stay those
	// of earlier measurements.
	mrng := rand.New(rand.NewPCG(17, 17))
	for i := range holes {
		rest := holes[i].suffix
		for n := 1 + mrng.IntN(3); n > 0 && rest != ""; n-- {
			if j := strings.IndexByte(rest, '\n'); j >= 0 {
				rest = rest[j+1:]
			} else {
				rest = ""
			}
		}
		holes[i].rest = rest
	}
	for _, edited := range []bool{false, true} {
		for _, window := range []int{0, 8000} {
			name := "context"
			if edited {
				name = "context-edited"
			}
			b.Run(fmt.Sprintf("%s/plan_window=%d", name, window), func(b *testing.B) {
				var lat []time.Duration
				cpu0 := cpuTime()
				var ms0, ms1 runtime.MemStats
				runtime.ReadMemStats(&ms0)
				for range b.N {
					lat = lat[:0]
					for _, h := range holes {
						body := map[string]any{"path": h.path, "prefix": h.prefix, "suffix": h.suffix}
						if edited {
							body["suffix"] = h.rest
						}
						if window > 0 {
							body["options"] = map[string]any{"plan_window": window}
						}
						_, d := post(body)
						lat = append(lat, d)
					}
				}
				cpu := cpuTime() - cpu0
				runtime.ReadMemStats(&ms1)
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
				b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
				b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N*len(holes)), "cpu-ms/req")
				b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/1024/float64(b.N*len(holes)), "alloc-KB/req")
				b.ReportMetric(float64(ms1.NumGC-ms0.NumGC), "GCs")
			})
		}
	}
	b.Run("update", func(b *testing.B) {
		target := filepath.Join(dir, paths[len(paths)/2])
		orig, err := os.ReadFile(target)
		if err != nil {
			b.Fatal(err)
		}
		defer func() {
			os.WriteFile(target, orig, 0o644)
			deadline := time.Now().Add(10 * time.Second)
			for status().Pending > 0 && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
		}()
		var seen, upd []time.Duration
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.GC() // twice: pools keep objects one collection more
		runtime.ReadMemStats(&m0)
		for range 20 * b.N {
			probes++ // a new name each save, across runs: each save is a new file version
			i := probes
			name := fmt.Sprintf("repoctxProbe%dValue%d", i, time.Now().UnixNano())
			src := append(slices.Clip(orig), fmt.Sprintf("\nfun %s(seed: Int): Int = seed * %d\n", name, i+2)...)
			before := status().Updates
			t := time.Now()
			if err := os.WriteFile(target, src, 0o644); err != nil {
				b.Fatal(err)
			}
			caller := map[string]any{"path": paths[0], "prefix": "fun probe() {\n    val x = " + name + "(", "suffix": ")\n}\n"}
			for {
				out, _ := post(caller)
				if strings.Contains(out.Context, "fun "+name) {
					break
				}
				if time.Since(t) > 10*time.Second {
					b.Fatalf("save %d not seen after 10 s", i)
				}
				time.Sleep(2 * time.Millisecond)
			}
			seen = append(seen, time.Since(t))
			for {
				st := status()
				if st.Updates > before && st.Pending == 0 {
					upd = append(upd, time.Duration(st.LastUpdateMS*float64(time.Millisecond)))
					break
				}
				time.Sleep(2 * time.Millisecond)
			}
		}
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&m1)
		med := func(d []time.Duration) float64 {
			slices.Sort(d)
			return float64(d[len(d)/2].Microseconds()) / 1000
		}
		b.ReportMetric(med(seen), "seen-ms")
		b.ReportMetric(float64(seen[len(seen)-1].Microseconds())/1000, "seen-max-ms")
		b.ReportMetric(med(upd), "update-ms")
		b.ReportMetric(float64(benchrepo.PeakRSSMB()), "peak-MB")
		if os.Getenv("REPOCTX_BENCH_URL") == "" {
			// The live heap before and after the saves: each file version's chunks,
			// vectors and symbols stay in the in-memory index until it is made again
			// (see compactAfter).
			b.ReportMetric(float64(m0.HeapAlloc)/(1<<20), "heap0-MB")
			b.ReportMetric(float64(m1.HeapAlloc)/(1<<20), "heap1-MB")
		}
	})
}

// probes counts the saves of BenchmarkServe.
var probes int

// cpuTime returns the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
