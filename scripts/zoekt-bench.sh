#!/bin/sh
# zoekt-bench.sh REPO_DIR FILE 'ID1 ID2 ID3' measures `repoctx index` and `repoctx query`
# against zoekt's zoekt-index and zoekt on one checkout, as whole processes, interleaved:
# one warm-up round, then ROUNDS (default 3) counted rounds of
#   zoekt-all     zoekt-index -index FRESH REPO_DIR          (every file, zoekt's defaults)
#   zoekt-src     zoekt-index -index FRESH SRC               (a copy of the files repoctx indexes)
#   repoctx       repoctx index --cache-dir FRESH REPO_DIR   (defaults: BM25 + LSA)
#   repoctx-bm25  repoctx index --dense none --cache-dir FRESH REPO_DIR
# (FRESH: an empty index folder per run; the OS file cache is warm), then QROUNDS (default
# 5) counted rounds, after a warm-up, of one-shot queries on the last round's indexes:
#   repoctx-query repoctx query --file FILE --prefix-file P REPO_DIR   (P: "ID1 ID2 ID3" as code)
#   zoekt-query   zoekt -index_dir Z 'ID1 or ID2 or ID3'
# Each run is timed with /usr/bin/time (wall s, user s, system s, peak RSS KB) next to the
# 1-minute load average; the summary gives medians and min-max of the counted rounds, the
# index sizes (du -sb) and the file counts and bytes of both file sets.
# Needs REPOCTX (a repoctx binary) and ZOEKT_BIN (a folder with zoekt-index and zoekt).
# FILE is the completion file's path relative to REPO_DIR (it need not exist).
set -eu
repo=$(cd "$1" && pwd)
file=$2
ids=$3
rounds=${ROUNDS:-3}
qrounds=${QROUNDS:-5}
: "${REPOCTX:?set REPOCTX to a repoctx binary}"
: "${ZOEKT_BIN:?set ZOEKT_BIN to the folder holding zoekt-index and zoekt}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
res=$work/results.txt
: >"$res"

# The file set repoctx indexes: every file less those its walker leaves out (-v lists them,
# a folder with a trailing slash).
"$REPOCTX" index -v --dense none --cache-dir "$work/probe" "$repo" 2>"$work/walk.txt" >/dev/null
rm -rf "$work/probe"
sed -n 's/^skip \(.*\): [^:]*$/\1/p' "$work/walk.txt" >"$work/skipped.txt"
(cd "$repo" && find . -type f | sed 's|^\./||' | LC_ALL=C sort) >"$work/all.txt"
awk 'NR == FNR { if ($0 ~ /\/$/) dirs[$0] = 1; else files[$0] = 1; next }
	{ if ($0 in files) next; for (d in dirs) if (index($0, d) == 1) next; print }' \
	"$work/skipped.txt" "$work/all.txt" >"$work/src.txt"
mkdir "$work/src"
(cd "$repo" && tr '\n' '\0' <"$work/src.txt" | tar --null -T - -cf -) | tar -xf - -C "$work/src"
bytes() { (cd "$1" && find . -type f -print0 | xargs -0 cat | wc -c); }
echo "files: all $(wc -l <"$work/all.txt") ($(bytes "$repo") bytes), repoctx's $(wc -l <"$work/src.txt") ($(bytes "$work/src") bytes)"

# run NAME ROUND CMD...: time one whole process, append "NAME ROUND wall user sys rssKB load".
run() {
	name=$1 round=$2
	shift 2
	load=$(cut -d' ' -f1 /proc/loadavg)
	/usr/bin/time -f '%e %U %S %M' -o "$work/t" "$@" >/dev/null 2>"$work/err" ||
		{ cat "$work/err" >&2; exit 1; }
	echo "$name $round $(cat "$work/t") $load" >>"$res"
}

i=0
while [ $i -le "$rounds" ]; do
	for v in zoekt-all zoekt-src repoctx repoctx-bm25; do rm -rf "$work/$v"; done
	mkdir "$work/zoekt-all" "$work/zoekt-src"
	run zoekt-all $i "$ZOEKT_BIN/zoekt-index" -index "$work/zoekt-all" "$repo"
	run repoctx $i "$REPOCTX" index --cache-dir "$work/repoctx" "$repo"
	run zoekt-src $i "$ZOEKT_BIN/zoekt-index" -index "$work/zoekt-src" "$work/src"
	run repoctx-bm25 $i "$REPOCTX" index --dense none --cache-dir "$work/repoctx-bm25" "$repo"
	i=$((i + 1))
done
for v in zoekt-all zoekt-src repoctx repoctx-bm25; do
	echo "index size $v: $(du -sb "$work/$v" | cut -f1) bytes"
done

echo "$ids" >"$work/prefix.txt"
zq=$(echo "$ids" | sed 's/ / or /g')
i=0
while [ $i -le "$qrounds" ]; do
	run repoctx-query $i "$REPOCTX" query --cache-dir "$work/repoctx" --file "$file" \
		--prefix-file "$work/prefix.txt" "$repo"
	run zoekt-query $i "$ZOEKT_BIN/zoekt" -index_dir "$work/zoekt-all" "$zq"
	i=$((i + 1))
done

echo "variant: wall s median (min-max), CPU s median (user+system), peak RSS MB median, load 1-min (min-max); round 0 is the warm-up"
for v in zoekt-all zoekt-src repoctx repoctx-bm25 repoctx-query zoekt-query; do
	awk -v v=$v '$1 == v && $2 > 0 { print $3, $4 + $5, $6 / 1024, $7 }' "$res" >"$work/v"
	n=$(wc -l <"$work/v")
	med() { cut -d' ' -f"$1" "$work/v" | sort -n | awk -v n="$n" '{ a[NR] = $1 }
		END { m = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2; printf "%.2f (%.2f-%.2f)", m, a[1], a[n] }'; }
	echo "$v [$n]: wall $(med 1), CPU $(med 2), RSS MB $(med 3), load $(med 4)"
done
echo "raw: name round wall user sys rssKB load"
cat "$res"
