#!/usr/bin/env bash
# Installs the generated C source of the npm package @tree-sitter-grammars/tree-sitter-kotlin
# into src/ next to this script (gitignored), for builds with the tag kotlin2 (see doc.go).
# It uses `npm pack` (npm's own cache makes later runs offline) and checks the tarball's
# SHA-256. It does nothing when src/ already holds this version.
set -euo pipefail
cd "$(dirname "$0")"
version=1.1.0
sha256=28916be3fdb0487dbd4fd0ea62281f969f15cab2bf13132ceb18d2fb167aa697
if [ -f src/VERSION ] && [ "$(cat src/VERSION)" = "$version" ] && [ -f src/parser.c ]; then
  exit 0
fi
command -v npm >/dev/null 2>&1 || { echo "fetch.sh: npm is needed to install the kotlin2 grammar" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
npm pack --silent --pack-destination "$tmp" "@tree-sitter-grammars/tree-sitter-kotlin@$version" >/dev/null
tgz="$tmp/tree-sitter-grammars-tree-sitter-kotlin-$version.tgz"
echo "$sha256  $tgz" | sha256sum -c --quiet -
tar -xzf "$tgz" -C "$tmp" package/src/parser.c package/src/scanner.c package/src/tree_sitter package/LICENSE
rm -rf src.new
mkdir -p src.new
cp -R "$tmp/package/src/parser.c" "$tmp/package/src/scanner.c" "$tmp/package/src/tree_sitter" "$tmp/package/LICENSE" src.new/
echo "$version" > src.new/VERSION
rm -rf src
mv src.new src
echo "fetch.sh: installed @tree-sitter-grammars/tree-sitter-kotlin@$version into $(pwd)/src"
