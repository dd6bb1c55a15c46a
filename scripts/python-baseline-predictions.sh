#!/bin/sh
# python-baseline-predictions.sh DATA LANG STAGE OUT [STRATEGY] writes OUT: the
# predictions of a reference strategy of ../shared/bench/python_baselines.py (default
# sparecode, the Kotlin-track winner's approach; see that script's doc for the others),
# one JSON line per datapoint of DATA/LANG-STAGE.jsonl, for
#   repoctx eval --data DATA --lang LANG --stage STAGE --predictions sparecode=OUT
# The Python script reads unpacked snapshots, DATA/repositories-LANG-STAGE/{snapshot}/.
# When DATA has none, DATA/LANG-STAGE.zip (a zip of zips) is unpacked first: into
# $UNPACK_DIR when set (kept, and reused when it holds the snapshots), else into a
# temporary folder removed at the end. PYTHON_BASELINES overrides the script's path;
# PYTHON the interpreter (python3). Run from the repository root or anywhere.
set -eu
if [ $# -lt 4 ] || [ $# -gt 5 ]; then
	echo "usage: $0 DATA LANG STAGE OUT [STRATEGY]" >&2
	exit 2
fi
data=$1 lang=$2 stage=$3 out=$4 strategy=${5:-sparecode}
here=$(cd "$(dirname "$0")" && pwd)
script=${PYTHON_BASELINES:-$here/../../shared/bench/python_baselines.py}
py=${PYTHON:-python3}
set_=$lang-$stage
[ -f "$script" ] || { echo "$0: no $script (set PYTHON_BASELINES)" >&2; exit 1; }
[ -f "$data/$set_.jsonl" ] || { echo "$0: no $data/$set_.jsonl" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$data
if [ ! -d "$data/repositories-$set_" ]; then
	root=${UNPACK_DIR:-$tmp/data}
	mkdir -p "$root"
	cp "$data/$set_.jsonl" "$root/$set_.jsonl"
	if [ ! -d "$root/repositories-$set_" ]; then
		[ -f "$data/$set_.zip" ] || { echo "$0: neither $data/repositories-$set_ nor $data/$set_.zip" >&2; exit 1; }
		"$py" - "$data/$set_.zip" "$root/repositories-$set_.part" <<'PY'
import io, os, sys, zipfile
outer, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(outer) as z:
    for name in z.namelist():
        if name.endswith(".zip") and "/" not in name:
            with zipfile.ZipFile(io.BytesIO(z.read(name))) as inner:
                inner.extractall(os.path.join(dest, name[:-4]))  # extractall drops ".." and absolute parts
PY
		mv "$root/repositories-$set_.part" "$root/repositories-$set_"
	fi
fi
"$py" "$script" --data "$root" --stage "$stage" --lang "$lang" --strategy "$strategy" --out "$tmp/out" >&2
mv "$tmp/out/$lang-$strategy.jsonl" "$out"
cat "$tmp/out/$lang-$strategy.time.json" >&2
echo >&2
