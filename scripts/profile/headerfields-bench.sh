#!/usr/bin/env bash
# Needs the Swift toolchain on PATH (/opt/swift/usr/bin).
# Times HeaderFields and HeadParser (public API only) for two commits, side by side, in one
# run: scripts/profile/headerfields-bench.sh [BASE_COMMIT] (default main). Each commit is
# exported with git archive into .build/headerfields-bench/<commit> and built in release.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
base=${1:-main}
work=$root/.build/headerfields-bench
mkdir -p "$work"
for commit in "$base" HEAD; do
    id=$(git -C "$root" rev-parse --short "$commit")
    tree=$work/src-$id
    [ -d "$tree" ] || { mkdir -p "$tree"; git -C "$root" archive "$id" | tar -x -C "$tree"; }
    cp -r "$root/scripts/profile/headerfields-bench/." "$work/bench-$id/"
    # The borrowed API (forEachField, firstValue) is timed where the commit has it.
    flags=()
    grep -q "func forEachField" "$tree/Sources/HTTPCore/HeaderFields.swift" && flags=(-Xswiftc -DBORROWED_API)
    echo "== $commit ($id)"
    (cd "$work/bench-$id" && FORMGATE_ROOT=$tree swift run -c release --scratch-path "$work/build-$id" "${flags[@]}" 2>/dev/null)
done
