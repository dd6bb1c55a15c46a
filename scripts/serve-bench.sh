#!/bin/sh
# serve-bench.sh REPO_DIR [serve flags...] measures `repoctx serve` as a process on a
# copy of REPO_DIR (e.g. /tmp/ktor1k, the first 1,000 Kotlin files of ktorio/ktor at
# ef92e55): the time to the first view with an empty cache and after a restart (the
# cache warm), then BenchmarkServe against the running server (POST /v1/context
# latency on 500 holes, planner off and plan_window 8000; the time until a saved file's
# new function is served), then the server's peak RSS (VmHWM). COUNT=N repeats the
# benchmark. Run from the repository root.
set -eu
repo=$1
shift
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -TERM $pid 2>/dev/null; rm -rf "$work"' EXIT
go build -o "$work/repoctx" ./cmd/repoctx
cp -r "$repo" "$work/repo"
start() {
	rm -f "$work/out"
	t0=$(date +%s.%N)
	"$work/repoctx" serve --addr 127.0.0.1:0 --cache-dir "$work/cache" "$@" "$work/repo" >"$work/out" 2>>"$work/log" &
	pid=$!
	until grep -q listening "$work/out" 2>/dev/null; do
		kill -0 $pid 2>/dev/null || { cat "$work/log"; exit 1; }
		sleep 0.02
	done
	awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "  ready in %.2f s\n", b - a }'
}
stop() {
	grep VmHWM /proc/$pid/status | awk '{ printf "  server peak RSS %d MB\n", $2 / 1024 }'
	kill -TERM $pid
	wait $pid
	pid=
}
echo "first start, empty cache:"
start "$@"
stop
echo "restart, warm cache:"
start "$@"
url=$(sed -n 's/listening on //p' "$work/out")
[ -n "$url" ] || { echo "no server address"; exit 1; }
REPOCTX_BENCH_REPO="$work/repo" REPOCTX_BENCH_URL="$url" go test ./serve/ -run '^$' -bench Serve -benchtime 1x -count "${COUNT:-1}"
stop
echo "server log:"
cat "$work/log"
