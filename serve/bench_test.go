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
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/repoctx/repoctx/internal/benchrepo"
	"github.com/repoctx/repoctx/retrieve"
	"github.com/repoctx/repoctx/retrieve/hugot"
)

// BenchmarkServe measures `repoctx serve` on the repository in $REPOCTX_BENCH_REPO
// (the is the first 1,000 Kotlin files of ktorio/ktor at ef92e55), copied to
// a temporary folder, over HTTP on a loopback listener:
//
//   - first-view: the first view with an empty cache and with the cache warm (a
//     restart);
//   - context: POST /v1/context latency over 500 random holes (a random line of a
//     random file, cut at a random column), hybrid retrieval with the built-in LSA,
//     planner off and plan_window 8000 (characters/3.5), reported as p50-ms and
//     p95-ms;
//   - update: a file saved with a new function, then the time until a hole calling
//     it gets the function's definition (polling POST /v1/context), and the time the
//     view update took, medians of 20 saves.
//
// $REPOCTX_BENCH_MODEL names a model folder (e.g. testdata/models/tiny-bert) to run
// the update with a model instead of LSA. Peak RSS (peak-MB) is the whole test
// process's, client included. Run:
//
//	REPOCTX_BENCH_REPO=/tmp/ktor1k go test ./serve/ -run '^$' -bench Serve -benchtime 1x
func BenchmarkServe(b *testing.B) {
	root, paths := benchrepo.Paths(b)
	dir := benchrepo.Subset(b, root, paths, len(paths))
	cache := b.TempDir()
	cfg := DefaultConfig()
	cfg.Workspace.CacheDir = cache
	if m := os.Getenv("REPOCTX_BENCH_MODEL"); m != "" {
		emb, err := hugot.New(m, hugot.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer emb.Close()
		cfg.Workspace.Dense, cfg.Workspace.Embedder = retrieve.DenseModel, emb
	}
	updates := make(chan Update, 100)
	cfg.OnUpdate = func(u Update) { updates <- u }
	// The first view with an empty cache, then again in the same process (the
	// repository's corpus is still in memory).
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
		<-updates
		firstMS[i] = time.Since(t).Milliseconds()
	}
	b.Run("first-view", func(b *testing.B) {
		b.ReportMetric(float64(firstMS[0]), "cold-ms")
		b.ReportMetric(float64(firstMS[1]), "reopen-ms")
		st := srv.ws[0].Status()
		b.ReportMetric(float64(st.Files), "files")
		b.ReportMetric(float64(st.Chunks), "chunks")
	})
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.Serve(ctx, ln)
	url := "http://" + ln.Addr().String() + "/v1/context"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	post := func(body any) (ContextResponse, time.Duration) {
		raw, _ := json.Marshal(body)
		t := time.Now()
		resp, err := client.Post(url, "application/json", bytes.NewReader(raw))
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
	// 500 random holes, the same for both settings.
	rng := rand.New(rand.NewPCG(13, 13))
	type hole struct{ path, prefix, suffix string }
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
		holes = append(holes, hole{p, string(raw[:cut]), string(raw[cut:])})
	}
	for _, window := range []int{0, 8000} {
		b.Run(fmt.Sprintf("context/plan_window=%d", window), func(b *testing.B) {
			var lat []time.Duration
			for range b.N {
				lat = lat[:0]
				for _, h := range holes {
					body := map[string]any{"path": h.path, "prefix": h.prefix, "suffix": h.suffix}
					if window > 0 {
						body["options"] = map[string]any{"plan_window": window}
					}
					_, d := post(body)
					lat = append(lat, d)
				}
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
			b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
		})
	}
	b.Run("update", func(b *testing.B) {
		target := paths[len(paths)/2]
		orig, err := os.ReadFile(filepath.Join(dir, target))
		if err != nil {
			b.Fatal(err)
		}
		var seen, upd, view []time.Duration
		for i := range 20 * b.N {
			name := fmt.Sprintf("repoctxProbe%dValue", i)
			src := append(slices.Clip(orig), fmt.Sprintf("\nfun %s(seed: Int): Int = seed * %d\n", name, i+2)...)
			for len(updates) > 0 {
				<-updates
			}
			t := time.Now()
			if err := os.WriteFile(filepath.Join(dir, target), src, 0o644); err != nil {
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
			select {
			case u := <-updates:
				upd = append(upd, u.Walk+u.View)
				view = append(view, u.View)
			case <-time.After(10 * time.Second):
				b.Fatal("no update reported")
			}
		}
		med := func(d []time.Duration) float64 {
			slices.Sort(d)
			return float64(d[len(d)/2].Microseconds()) / 1000
		}
		b.ReportMetric(med(seen), "seen-ms")
		b.ReportMetric(med(upd), "update-ms")
		b.ReportMetric(med(view), "view-ms")
		b.ReportMetric(float64(benchrepo.PeakRSSMB()), "peak-MB")
	})
}
