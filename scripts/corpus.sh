#!/usr/bin/env bash
# corpus.sh OUT [REPOCTX]
#
# Builds the evaluation corpus from public repositories at pinned revisions (see docs/corpus.md):
#   OUT/{kotlin,python}-{small,block}-{tune,valid}/  Kotlin and Python, split by repository into a
#       tuning half and a validation half, 5 repositories x 40 datapoints per half and style
#   OUT/{java,go,typescript}-small/                   3 repositories x 40 datapoints each, small style
# Each folder is a data dir in the competition layout: {lang}-{stage}.jsonl, .truth.jsonl, .zip,
# with stage {half}-{style} (e.g. kotlin-small-valid/kotlin-valid-small.jsonl) or small, so
#   repoctx eval --data OUT/kotlin-small-valid --lang kotlin --stage valid-small --baselines
#
# Repositories: OUT/repos/owner+name/repo is a bare repository whose HEAD is detached at the pinned
# revision. It is cloned from https://github.com/owner/name (a full clone: the datapoints come from
# the last 2000 non-merge commits before the revision), or, when MIRROR is set and holds
# MIRROR/owner+name/repo (a bare repository, a clone or its .git), made to borrow that repository's
# objects (objects/info/alternates) instead of downloading them. from-git reads every repository from
# its HEAD, which is the pinned revision (the same as --until REV, which names one revision for all
# the repositories of a call), and names it owner/name after its folder. The same revisions, seed and
# binary give byte-identical data.
#
# REPOCTX is the binary to use (default: repoctx on PATH). PER_REPO (40) and SEED (1) change the
# datapoints per repository and the random seed. The data is large (about 6.5 GB) and must never be
# committed.
set -euo pipefail

[[ $# -ge 1 && $# -le 2 ]] || { echo "usage: $0 OUT [REPOCTX]" >&2; exit 2; }
out=$1
rc=${2:-repoctx}
per_repo=${PER_REPO:-40}
seed=${SEED:-1}
mirror=${MIRROR:-}

# set lang owner/name pinned-revision
#   set: tune or valid (Kotlin and Python, split by repository), or all (one set per language)
repos="
tune  kotlin     ktorio/ktor                   ef92e5537d7465961f1b3f2b21e217fc35bcfa1f
tune  kotlin     Kotlin/kotlinx.coroutines     792ac67bdcd5592e5764753e623a9e8c6e4bcb29
tune  kotlin     detekt/detekt                 dbfb8423263b79c3d035a21d110b10bf4ba02cfe
tune  kotlin     ajalt/clikt                   fa2e48c54995a88d492f05568a64889d99994877
tune  kotlin     android/nowinandroid          d6abd6d3e562ae0f017888f5d62042316a49a2d6
valid kotlin     kotest/kotest                 dfee83ac086872c0ffe788d975e39d66f074f141
valid kotlin     JetBrains/Exposed             1be664715fc581cda0ec6141b2914908dabe184e
valid kotlin     Kotlin/kotlinx.serialization  370c4e3780066b82f746cf38e4733cbe62c94f74
valid kotlin     Kotlin/kotlinx-datetime       c006a0f07dc129d8afa3760f3f4c01c6bd2d2296
valid kotlin     square/leakcanary             0f7dbab17e2a9f6f310f7b8be214e029bfc502e3
tune  python     fastapi/fastapi               c3f316b7e814667e8ee81e03a7330d00ee61e45c
tune  python     pytest-dev/pytest             df87db7b0462fb764ef73fa00561adf8ad047572
tune  python     psf/requests                  1f6589ec3a1ee910f9a65cc3ceac60b26677bc0e
tune  python     beetbox/beets                 07f39c5204997a356fd98b7e88ba9b185efb2e66
tune  python     marshmallow-code/marshmallow  341b927f219205704728c05cd61f04d7e9727523
valid python     aio-libs/aiohttp              495e778360d1924da63e16dba0f0d76baf56a56a
valid python     scrapy/scrapy                 11079cb1c85b9e75a39a7269943c69d1a975d485
valid python     pydantic/pydantic             2151025aa51263f3016502b00010b78e4481eaa1
valid python     httpie/cli                    5b604c37c6c67e18e7c3e9aee6c88a8c22b98345
valid python     more-itertools/more-itertools 2fe1b2eeb9d75f994113fe3ac76d14b6bcd6fb10
all   java       google/gson                   9835b6f90192f79cdf5300c528fc6212455fb6c1
all   java       square/javapoet               b9017a9503b76e11b4ad4c1a9f050e2d29112cb0
all   java       square/retrofit               0b118105fe8436791436b8bc9c95b9aa2cfd3bdd
all   go         go-chi/chi                    735ae2b87f8c733d616e809ae86e0985c1bc3350
all   go         spf13/cobra                   adbc8813901bba65827259daa8e22ff94ec1f30e
all   go         spf13/viper                   528f7416c4b56a4948673984b190bf8713f0c3c4
all   typescript colinhacks/zod                e516c3baf22615e20934116abebfed6c000222c2
all   typescript sindresorhus/ky               3419113b48e034fdcf8fa6bd3be3da7b3d0d758f
all   typescript pmndrs/zustand                f094eebe9bd3b4b0d77b997f69ab1d273f69a877
"

mkdir -p "$out/repos"
out=$(cd "$out" && pwd)
[[ -z $mirror ]] || mirror=$(cd "$mirror" && pwd)

# repo OWNER/NAME REV: prints the path of OUT/repos/owner+name/repo, a bare repository holding REV
# with HEAD detached at it (cloned, or borrowing MIRROR's objects).
repo() {
  local name=${1/\//+} rev=$2 src dir
  dir=$out/repos/$name/repo
  if [[ ! -d $dir ]]; then
    src=${mirror:+$mirror/$name/repo}
    [[ -n $src && -d $src/.git ]] && src=$src/.git
    if [[ -n $src && -d $src/objects ]]; then
      git init -q --bare "$dir"
      echo "$src/objects" > "$dir/objects/info/alternates"
    else
      echo "cloning https://github.com/$1" >&2
      git clone -q --bare "https://github.com/$1" "$dir.part" >&2
      mv "$dir.part" "$dir"
    fi
  fi
  git --git-dir="$dir" cat-file -e "$rev^{commit}" 2>/dev/null ||
    { echo "$1: commit $rev is not in $dir (or its borrowed objects)" >&2; exit 1; }
  git --git-dir="$dir" update-ref --no-deref HEAD "$rev"
  echo "$dir"
}

# build SET LANG STYLE DIR STAGE: one from-git call over the repositories of SET and LANG.
build() {
  local set=$1 lang=$2 style=$3 dir=$4 stage=$5 paths=() s l name rev
  while read -r s l name rev; do
    [[ $s == "$set" && $l == "$lang" ]] || continue
    paths+=("$(repo "$name" "$rev")")
  done <<< "$repos"
  mkdir -p "$dir"
  echo "== $lang $stage: ${#paths[@]} repositories -> $dir" >&2
  "$rc" dataset from-git --style "$style" --lang "$lang" --stage "$stage" --out "$dir" \
    --per-repo "$per_repo" --seed "$seed" "${paths[@]}" | tee "$dir/$lang-$stage.log"
}

start=$(date +%s)
for lang in kotlin python; do
  for style in small block; do
    for half in tune valid; do
      build "$half" "$lang" "$style" "$out/$lang-$style-$half" "$half-$style"
    done
  done
done
for lang in java go typescript; do
  build all "$lang" small "$out/$lang-small" small
done
echo "built in $(( $(date +%s) - start ))s" >&2
