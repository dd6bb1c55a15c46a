#!/usr/bin/env bash
# build-corpus.sh MIRROR OUT [REPOCTX]
#
# Builds the tuning/validation corpus (docs/results.md) from local git mirrors:
#   OUT/{tune,valid}/{small,block}/{kotlin,python}-{half}-{style}.{jsonl,truth.jsonl,zip}
# each folder a data dir for `repoctx eval --data OUT/tune/small --lang kotlin --stage tune-small`.
#
# MIRROR holds one folder per repository named owner+name, with the bare git folder (or a clone)
# at owner+name/repo (e.g. MIRROR/square+okio/repo). Every repository is
# read at the revision pinned below (not the mirror's HEAD), through a small bare repository under
# OUT/.repos that borrows the mirror's objects (objects/info/alternates), so a later fetch of the
# mirror changes nothing as long as the pinned commits are still in it. REPOCTX is the binary to
# use (default: repoctx on PATH). The same mirrors, revisions and binary give byte-identical data.
#
# The data is large (several GB) and must never be committed.
set -euo pipefail

[[ $# -ge 2 ]] || { echo "usage: $0 MIRROR OUT [REPOCTX]" >&2; exit 2; }
mirror=$(readlink -f "$1")
out=$2
rc=${3:-repoctx}
per_repo=${PER_REPO:-40} # datapoints per repository, per style
seed=${SEED:-1}

# half lang owner/name pinned-revision   (split by repository, fixed; see OUT/README.md)
repos="
tune  kotlin ktorio/ktor                   ef92e5537d7465961f1b3f2b21e217fc35bcfa1f
tune  kotlin Kotlin/kotlinx.coroutines     792ac67bdcd5592e5764753e623a9e8c6e4bcb29
tune  kotlin detekt/detekt                 dbfb8423263b79c3d035a21d110b10bf4ba02cfe
tune  kotlin ajalt/clikt                   fa2e48c54995a88d492f05568a64889d99994877
tune  kotlin android/nowinandroid          d6abd6d3e562ae0f017888f5d62042316a49a2d6
valid kotlin kotest/kotest                 dfee83ac086872c0ffe788d975e39d66f074f141
valid kotlin JetBrains/Exposed             1be664715fc581cda0ec6141b2914908dabe184e
valid kotlin Kotlin/kotlinx.serialization  370c4e3780066b82f746cf38e4733cbe62c94f74
valid kotlin Kotlin/kotlinx-datetime       c006a0f07dc129d8afa3760f3f4c01c6bd2d2296
valid kotlin square/leakcanary             0f7dbab17e2a9f6f310f7b8be214e029bfc502e3
tune  python fastapi/fastapi               c3f316b7e814667e8ee81e03a7330d00ee61e45c
tune  python pytest-dev/pytest             df87db7b0462fb764ef73fa00561adf8ad047572
tune  python psf/requests                  1f6589ec3a1ee910f9a65cc3ceac60b26677bc0e
tune  python beetbox/beets                 07f39c5204997a356fd98b7e88ba9b185efb2e66
tune  python marshmallow-code/marshmallow  341b927f219205704728c05cd61f04d7e9727523
valid python aio-libs/aiohttp              495e778360d1924da63e16dba0f0d76baf56a56a
valid python scrapy/scrapy                 11079cb1c85b9e75a39a7269943c69d1a975d485
valid python pydantic/pydantic             2151025aa51263f3016502b00010b78e4481eaa1
valid python httpie/cli                    5b604c37c6c67e18e7c3e9aee6c88a8c22b98345
valid python more-itertools/more-itertools 2fe1b2eeb9d75f994113fe3ac76d14b6bcd6fb10
"

mkdir -p "$out/.repos"
out=$(readlink -f "$out")

# shim OWNER/NAME REV: a bare repository at OUT/.repos/owner+name/repo whose HEAD is REV and
# whose objects are the mirror's.
shim() {
  local name=${1/\//+} rev=$2 src objects dir
  src=$mirror/$name/repo
  [[ -d $src/.git ]] && src=$src/.git
  objects=$src/objects
  [[ -d $objects ]] || { echo "no git objects at $objects (fetch $1 first)" >&2; exit 1; }
  dir=$out/.repos/$name/repo
  if [[ ! -d $dir ]]; then
    git init -q --bare "$dir"
    echo "$objects" > "$dir/objects/info/alternates"
  fi
  git --git-dir="$dir" cat-file -e "$rev^{commit}" 2>/dev/null ||
    { echo "$1: commit $rev is not in $src" >&2; exit 1; }
  git --git-dir="$dir" update-ref HEAD "$rev"
  echo "$dir"
}

start=$(date +%s)
for half in tune valid; do
  for style in small block; do
    for lang in kotlin python; do
      paths=()
      while read -r h l name rev; do
        [[ $h == "$half" && $l == "$lang" ]] || continue
        paths+=("$(shim "$name" "$rev")")
      done <<< "$repos"
      dir=$out/$half/$style
      stage=$half-$style
      mkdir -p "$dir"
      echo "== $half $style $lang: ${#paths[@]} repositories" >&2
      "$rc" dataset from-git --style "$style" --lang "$lang" --stage "$stage" --out "$dir" \
        --per-repo "$per_repo" --seed "$seed" "${paths[@]}" | tee "$dir/$lang-$stage.log"
    done
  done
done
echo "built in $(( $(date +%s) - start ))s" >&2
