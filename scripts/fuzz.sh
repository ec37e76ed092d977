#!/usr/bin/env bash
# Builds FormGate's libFuzzer targets (Fuzz/, ASan) and runs each, seeded from Fuzz/Seeds/<target>
# (the corpus and hostile fixtures, scripts/make-fuzz-seeds.py) and Fuzz/Regressions/<target>
# (crashes found are written there: commit them, and they are replayed on every run).
#
#   scripts/fuzz.sh [SECONDS]         each target for SECONDS (default 30; what `make test` runs)
#   FUZZ_RUNS=N scripts/fuzz.sh       each target until N executions (libFuzzer -runs=N, no time
#                                     limit; `make fuzz` runs 10,000,000)
#
# Exits 1 when a target does not build (nothing is fuzzed then: no stale binary runs), has no
# coverage counters, or crashes. Writes FUZZ_REPORT (default .build/fuzz-report.txt: one row per
# target with executions, wall seconds, crashes, coverage) and the same as JSON beside it
# (.json), both naming the commit and code they ran on (scripts/provenance.py).
set -euo pipefail
seconds=${1:-30}
runs=${FUZZ_RUNS:-}
# A fixed seed (FUZZ_SEED, default 1: what `make test` uses) explores the same inputs in the
# same order on every run, so a green run here is green in CI; `make fuzz` passes 0 (random).
# For that the run starts from the committed inputs only (a fresh corpus directory, not the
# one earlier runs grew in .build/fuzz-corpus) and Swift's hashing is deterministic (a Set's
# order otherwise changes per process, and with it the coverage the fuzzer follows).
seed=${FUZZ_SEED:-1}
cd "$(dirname "$0")/.."
report=${FUZZ_REPORT:-.build/fuzz-report.txt}
mkdir -p .build "$(dirname "$report")"
rm -f "$report" "${report%.txt}.json"
# The code the binaries are built from: taken before the build, compared after the runs.
identity=$(python3 scripts/provenance.py identity)
commit=$(python3 -c 'import json, sys; i = json.load(sys.stdin); print(i["commit"][:12] + (" (dirty tree)" if i["dirty"] else ""))' <<< "$identity")
# One -sanitize= list, last on the command line: given as two flags (SwiftPM's --sanitize=fuzzer
# --sanitize=address), swiftc keeps only the last, so the Swift code got either no coverage or no
# ASan. (--sanitize=fuzzer stays for SwiftPM's linking of the targets.) The check below fails the
# run when the binaries carry no coverage counters.
build_log=.build/fuzz-build.log
if ! swift build -c release --package-path Fuzz --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address \
    -Xcc -fsanitize=fuzzer-no-link,address --build-path .build/fuzz >"$build_log" 2>&1; then
    grep -E "error:" "$build_log" | head -40 >&2 || tail -40 "$build_log" >&2
    echo "fuzz: the fuzz targets did not build (full log: $build_log); nothing was fuzzed" >&2
    exit 1
fi
grep -E "warning: .*FormGate|Build complete" "$build_log" || true
# FUZZ_TARGETS runs some targets only (the report then has their rows only).
all_targets=(FuzzMultipart FuzzHeaderValues FuzzHTTPHead FuzzChunked FuzzJWT FuzzH2 FuzzTus FuzzStrip FuzzRESP FuzzTraceParent)
read -r -a targets <<< "${FUZZ_TARGETS:-${all_targets[*]}}"
for target in "${targets[@]}"; do
    binary=".build/fuzz/release/$target"
    if [ ! -x "$binary" ]; then
        echo "fuzz: $binary was not built by this run" >&2
        exit 1
    fi
    size=$(readelf -SW "$binary" | awk '$2 == "__sancov_cntrs" { print $6 }')
    counters=$((16#${size:-0}))
    if [ "$counters" -lt 1000 ]; then
        echo "fuzz: $target has ${counters:-no} coverage counters: not instrumented" >&2
        exit 1
    fi
done
if [ -n "$runs" ]; then
    mode="runs=$runs"
    echo "fuzz: each target until $runs executions, seed $seed, on $commit"
else
    mode="seconds=$seconds"
    echo "fuzz: each target for $seconds s, seed $seed, on $commit"
fi
failed=0
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
printf '%-18s %14s %8s %8s %9s\n' target executions seconds crashes coverage
for target in "${targets[@]}"; do
    # FUZZ_SECONDS_<target> overrides SECONDS for one target (the multipart target is the slowest).
    override="FUZZ_SECONDS_$target"
    limit=(-max_total_time="${!override:-$seconds}")
    [ -n "$runs" ] && limit=(-runs="$runs")
    # The HTTP head harness scans at most 4 KiB: longer inputs only cost time.
    max_len=8192
    [ "$target" = FuzzHTTPHead ] && max_len=4200
    # A traceparent is read by its first 55 bytes and its ends: longer values only cost time.
    [ "$target" = FuzzTraceParent ] && max_len=512
    corpus=".build/fuzz-corpus/$target"
    if [ "$seed" != 0 ]; then
        corpus=".build/fuzz-corpus/seeded-$target"
        rm -rf "$corpus"
    fi
    mkdir -p "$corpus"
    log=".build/fuzz-$target.log"
    started=$(date +%s)
    set +e
    SWIFT_BACKTRACE=enable=no SWIFT_DETERMINISTIC_HASHING=1 ".build/fuzz/release/$target" "$corpus" "Fuzz/Seeds/$target" "Fuzz/Regressions/$target" \
        "${limit[@]}" -max_len="$max_len" -seed="$seed" -timeout=30 -report_slow_units=60 -rss_limit_mb=2048 \
        -artifact_prefix="Fuzz/Regressions/$target/crash-" -print_final_stats=1 >"$log" 2>&1
    status=$?
    set -e
    elapsed=$(( $(date +%s) - started ))
    executions=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    coverage=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$')
    crashes=0
    if [ $status -ne 0 ]; then
        crashes=1
        failed=1
        tail -30 "$log"
    fi
    printf '%-18s %14s %8s %8s %9s\n' "$target" "${executions:-0}" "$elapsed" "$crashes" "${coverage:-0}" | tee -a "$rows"
done
# The report: a header naming the run, the table, and the same as JSON for robustness-report.py.
python3 - "$report" "$rows" "$mode" "$seed" "$identity" "$(python3 scripts/provenance.py identity)" <<'EOF'
import datetime, json, sys
report, rows, mode, seed, identity, after = sys.argv[1:]
identity, after = json.loads(identity), json.loads(after)
kind, value = mode.split("=")
targets = []
for line in open(rows):
    name, executions, seconds, crashes, coverage = line.split()
    targets.append({"target": name, "executions": int(executions), "seconds": int(seconds),
                    "crashes": int(crashes), "coverage": int(coverage)})
record = dict(identity, date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              mode={kind: int(value)}, seed=int(seed), targets=targets,
              changed_during_run=sorted(p for p in set(identity["code"]) | set(after["code"])
                                        if identity["code"].get(p) != after["code"].get(p)))
json.dump(record, open(report[:-4] + ".json" if report.endswith(".txt") else report + ".json", "w"), indent=1)
with open(report, "w") as out:
    limit = f"until {int(value):,} executions" if kind == "runs" else f"for {value} s"
    out.write(f"# fuzz.sh {record['date']}, commit {identity['commit']}"
              f"{' (dirty tree: uncommitted code)' if identity['dirty'] else ''}, each target {limit}, seed {seed}\n")
    if record["changed_during_run"]:
        out.write(f"# code changed during the run: {', '.join(record['changed_during_run'])}\n")
    out.write(f"{'target':<18} {'executions':>14} {'seconds':>8} {'crashes':>8} {'coverage':>9}\n")
    out.writelines(open(rows))
EOF
crashed=$(awk '$4 > 0' "$rows" | wc -l)
echo "fuzz report: $report (commit $commit)"
echo "fuzz: $(( ${#targets[@]} - crashed )) passed, $crashed failed"
exit $failed
