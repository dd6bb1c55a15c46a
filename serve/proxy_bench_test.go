package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/repoctx/repoctx/internal/benchrepo"
)

// llama.vim's defaults: the lines it sends before and after the cursor's line.
const (
	benchPrefixLines = 256
	benchSuffixLines = 64
)

// benchHole is a cursor in a file as llama.vim sends it to POST /infill: input_prefix
// (up to benchPrefixLines lines before the cursor's line), prompt (the cursor's line up
// to the cursor), input_suffix (the rest of the line and up to benchSuffixLines more).
type benchHole struct {
	path, prefix, prompt, suffix string
}

// benchHoles returns n random holes (a random line of a random file, cut at a random
// column; the same for the same files and n) in the files paths of dir.
func benchHoles(b *testing.B, dir string, paths []string, n int) []benchHole {
	rng := rand.New(rand.NewPCG(17, 17))
	var holes []benchHole
	for len(holes) < n {
		p := paths[rng.IntN(len(paths))]
		raw, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil {
			b.Fatal(err)
		}
		if len(raw) == 0 {
			continue
		}
		lines := strings.SplitAfter(string(raw), "\n")
		l := rng.IntN(len(lines))
		line := lines[l]
		cut := 0
		if k := len(strings.TrimRight(line, "\n")); k > 0 {
			cut = rng.IntN(k)
		}
		for cut > 0 && line[cut]&0xC0 == 0x80 {
			cut--
		}
		holes = append(holes, benchHole{
			path:   p,
			prefix: strings.Join(lines[max(0, l-benchPrefixLines):l], ""),
			prompt: line[:cut],
			suffix: line[cut:] + strings.Join(lines[l+1:min(len(lines), l+1+benchSuffixLines)], ""),
		})
	}
	return holes
}

// benchServer starts a server on a copy of the repository in $REPOCTX_BENCH_REPO
// (skipping the benchmark without it) with edit applied to its configuration, and
// returns it with its URL and source paths.
func benchServer(b *testing.B, edit func(*Config)) (*Server, string, []string) {
	root, paths := benchrepo.Paths(b)
	dir := benchrepo.Subset(b, root, paths, len(paths))
	cfg := DefaultConfig()
	cfg.CacheDir = b.TempDir()
	if edit != nil {
		edit(&cfg)
	}
	srv, err := New(context.Background(), []Folder{{Dir: dir}}, cfg)
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	b.Cleanup(func() {
		hs.Close()
		srv.Close()
	})
	return srv, hs.URL, paths
}

// percentiles reports the median and the 95th percentile of d (sorted in place) in
// milliseconds as name-p50-ms and name-p95-ms.
func percentiles(b *testing.B, name string, d []time.Duration) {
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, name+"p50-ms")
	b.ReportMetric(float64(d[len(d)*95/100].Microseconds())/1000, name+"p95-ms")
}

// BenchmarkProxyInfill measures the latency the proxy adds to llama.cpp's POST /infill
// on the repository in $REPOCTX_BENCH_REPO (docs/editors.md uses the first 1,000
// Kotlin files of ktorio/ktor at ef92e55), with a model server that answers at once.
// Each iteration is one random hole as llama.vim sends it (no path: the proxy finds
// the file by its lines), sent straight to the model server and then through the
// proxy (default configuration: 100 ms context deadline) on loopback. It reports the
// median and p95 of the proxied requests (p50-ms, p95-ms), of the direct ones
// (direct-p50-ms, direct-p95-ms) and of the difference for the same hole (added-p50-ms,
// added-p95-ms), the share of requests forwarded with context (with-context-%), and
// the process's CPU time per hole (cpu-ms/op: client, proxy and model server, since
// all run in the benchmark's process).
// Run (500 holes):
//
//	REPOCTX_BENCH_REPO=/tmp/ktor1k go test -tags kotlin2 ./serve/ -run '^$' -bench ProxyInfill -benchtime 500x
func BenchmarkProxyInfill(b *testing.B) {
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"content":"","stop":true}`)
	}))
	defer model.Close()
	srv, base, paths := benchServer(b, func(c *Config) { c.Proxy = ProxyConfig{Upstream: model.URL} })
	dir := srv.ws[0].root
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	post := func(url string, body []byte) time.Duration {
		t := time.Now()
		resp, err := client.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		d := time.Since(t)
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("%s: status %d: %v", url, resp.StatusCode, err)
		}
		return d
	}
	b.Run("holes", func(b *testing.B) {
		holes := benchHoles(b, dir, paths, b.N)
		bodies := make([][]byte, len(holes))
		for i, h := range holes {
			bodies[i], _ = json.Marshal(map[string]any{
				"input_prefix": h.prefix, "prompt": h.prompt, "input_suffix": h.suffix,
				"input_extra": []any{}, "n_predict": 128, "stream": false, "cache_prompt": true,
				"t_max_prompt_ms": 500, "t_max_predict_ms": 1000,
			})
		}
		before := srv.proxy.status().WithContext
		direct := make([]time.Duration, 0, b.N)
		proxied := make([]time.Duration, 0, b.N)
		added := make([]time.Duration, 0, b.N)
		cpu0 := cpuTime()
		b.ResetTimer()
		for i := range b.N {
			d := post(model.URL+"/infill", bodies[i])
			p := post(base+"/infill", bodies[i])
			direct, proxied, added = append(direct, d), append(proxied, p), append(added, p-d)
		}
		b.StopTimer()
		b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		percentiles(b, "", proxied)
		percentiles(b, "direct-", direct)
		percentiles(b, "added-", added)
		b.ReportMetric(100*float64(srv.proxy.status().WithContext-before)/float64(b.N), "with-context-%")
	})
}

// BenchmarkLocate measures finding the completion file of a request that names none
// (locate: the file holding the most lines near the cursor) over the repository in
// $REPOCTX_BENCH_REPO, one random hole per iteration as llama.vim sends it. It reports
// the median and p95 per hole (p50-ms, p95-ms), the process's CPU time per hole
// (cpu-ms/op: less sensitive to the machine's load than the wall time) and the share
// of holes found in their own file (right-%; a hole whose lines several files hold
// may go to another). Run:
//
//	REPOCTX_BENCH_REPO=/tmp/ktor1k go test -tags kotlin2 ./serve/ -run '^$' -bench Locate -benchtime 500x
func BenchmarkLocate(b *testing.B) {
	srv, _, paths := benchServer(b, nil)
	b.Run("holes", func(b *testing.B) {
		holes := benchHoles(b, srv.ws[0].root, paths, b.N)
		lat := make([]time.Duration, 0, b.N)
		right := 0
		cpu0 := cpuTime()
		b.ResetTimer()
		for i := range b.N {
			h := holes[i]
			t := time.Now()
			m, ok := locate(srv.ws, h.prefix+h.prompt, h.suffix)
			lat = append(lat, time.Since(t))
			if ok && m.path == h.path {
				right++
			}
		}
		b.StopTimer()
		b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		percentiles(b, "", lat)
		b.ReportMetric(100*float64(right)/float64(b.N), "right-%")
	})
}
