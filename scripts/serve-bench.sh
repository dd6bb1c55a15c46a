#!/bin/sh
# serve-bench.sh REPO_DIR [serve flags...] measures `repoctx serve` as a process on a
# copy of REPO_DIR (e.g. /tmp/ktor1k, the first 1,000 Kotlin files of ktorio/ktor at
# ef92e55): the time to the first view with an empty cache and after a restart (the
# cache warm), then BenchmarkServe against the running server (POST /v1/context
# latency on 500 holes, planner off and plan_window 8000; the time until a saved file's
# new function is served), then the server's peak RSS (VmHWM). COUNT=N repeats the
# benchmark. INDEX=1 runs `repoctx index` on the copy before the restart, so that the
# restarted server reads its first view back from the stored view. TAGS sets the build
# tags (default kotlin2, as `make build`; TAGS= for a plain build). Run from the
# repository root.
set -eu
repo=$1
shift
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -TERM $pid 2>/dev/null; rm -rf "$work"' EXIT
tags=${TAGS-kotlin2}
go build -tags "$tags" -o "$work/repoctx" ./cmd/repoctx
cp -r "$repo" "$work/repo"
. scripts/serve-lib.sh
start() {
	serve_start "$work/repoctx" --cache-dir "$work/cache" "$@" "$work/repo"
	echo "  ready in $ready s"
}
stop() {
	echo "  server peak RSS $(serve_peak_mb) MB"
	serve_stop
}
echo "first start, empty cache:"
start "$@"
stop
if [ "${INDEX:-}" = 1 ]; then
	echo "repoctx index:"
	"$work/repoctx" index --cache-dir "$work/cache" "$work/repo" | sed 's/^/  /'
fi
echo "restart, warm cache:"
start "$@"
[ -n "$url" ] || { echo "no server address"; exit 1; }
REPOCTX_BENCH_REPO="$work/repo" REPOCTX_BENCH_URL="$url" go test -tags "$tags" ./serve/ -run '^$' -bench Serve -benchtime 1x -count "${COUNT:-1}"
stop
echo "server log:"
cat "$work/log"
