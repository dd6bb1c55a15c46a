#!/bin/sh
# growth.sh CORPUS N... measures repoctx against repository size: for each N, a copy
# of the first N source files of the folder CORPUS (Kotlin, Java and Python files, in
# path order: whole repositories and modules first), then
#   index  cold `repoctx index` into an empty cache: wall s, CPU s, peak RSS MB, and
#          the cache's size on disk MB;
#   query  one-shot `repoctx query` on that cache (the first file, its first 30 lines
#          as prefix): median of 3 runs, wall s, CPU s, peak RSS MB;
#   serve  `repoctx serve` on that cache: seconds until it listens, then
#          BenchmarkServe/context against it (500 holes, planner off and plan_window
#          8000: p50/p95/p99 ms), and the server's peak RSS (VmHWM) MB.
# One line per N and measure on standard output. Run from the repository root; needs
# Go and /usr/bin/time. docs/performance.md gives the corpus it was run on.
set -eu
[ $# -ge 2 ] || { echo "usage: sh scripts/growth.sh CORPUS N... (see the comment at the top)" >&2; exit 2; }
corpus=$1
shift
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -TERM $pid 2>/dev/null; rm -rf "$work"' EXIT
. scripts/serve-lib.sh
go build -tags kotlin2 -o "$work/repoctx" ./cmd/repoctx
go test -tags kotlin2 -c -o "$work/serve.test" ./serve
(cd "$corpus" && find . -type f \( -name '*.kt' -o -name '*.kts' -o -name '*.java' -o -name '*.py' \) |
	sed 's|^\./||' | LC_ALL=C sort) >"$work/all"
timed() { # timed OUT CMD...: OUT gets "wall user sys maxrss_kb"
	out=$1
	shift
	/usr/bin/time -f '%e %U %S %M' -o "$out" "$@" >/dev/null 2>>"$work/log"
}
for n in "$@"; do
	repo=$work/repo-$n cache=$work/cache-$n
	head -n "$n" "$work/all" >"$work/files"
	[ "$(wc -l <"$work/files")" -eq "$n" ] || { echo "$corpus has fewer than $n source files"; exit 1; }
	mkdir -p "$repo"
	(cd "$corpus" && tar -cf - -T "$work/files") | (cd "$repo" && tar -xf -)

	timed "$work/t" "$work/repoctx" index --cache-dir "$cache" "$repo"
	awk -v n="$n" -v mb="$(du -sm "$cache" | cut -f1)" \
		'{ printf "%d index wall %.2f s, CPU %.2f s, peak RSS %d MB, cache %d MB\n", n, $1, $2 + $3, $4 / 1024, mb }' "$work/t"

	f=$(head -n 1 "$work/files")
	head -n 30 "$repo/$f" >"$work/prefix"
	for i in 1 2 3; do
		timed "$work/q$i" "$work/repoctx" query --cache-dir "$cache" --file "$f" --prefix-file "$work/prefix" "$repo"
	done
	cat "$work/q1" "$work/q2" "$work/q3" | sort -n | sed -n 2p |
		awk -v n="$n" '{ printf "%d query wall %.2f s, CPU %.2f s, peak RSS %d MB (median of 3 by wall)\n", n, $1, $2 + $3, $4 / 1024 }'

	serve_start "$work/repoctx" --cache-dir "$cache" "$repo"
	echo "$n serve start $ready s (warm cache)"
	REPOCTX_BENCH_REPO="$repo" REPOCTX_BENCH_URL="$url" "$work/serve.test" -test.run '^$' \
		-test.bench 'Serve/^context$' -test.benchtime 1x 2>&1 |
		awk -v n="$n" '/^BenchmarkServe/ { for (i = 3; i < NF; i++) m[$(i + 1)] = $i;
			printf "%d serve %s p50 %s ms, p95 %s ms, p99 %s ms\n", n, $1, m["p50-ms"], m["p95-ms"], m["p99-ms"] }'
	echo "$n serve peak RSS $(serve_peak_mb) MB"
	serve_stop || true
	rm -rf "$repo" "$cache"
done
