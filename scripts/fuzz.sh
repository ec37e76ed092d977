#!/usr/bin/env bash
# Builds FormGate's libFuzzer targets (Fuzz/, ASan) and runs each for SECONDS (default 30),
# seeded from Fuzz/Seeds/<target> (the corpus and hostile fixtures, scripts/make-fuzz-seeds.py) and Fuzz/Regressions/<target> (crashes found are written
# there: commit them, and they are replayed on every run). Prints executions and crashes per target; exits 1 on any crash.
set -euo pipefail
seconds=${1:-30}
# A fixed seed (FUZZ_SEED, default 1: what `make test` uses) explores the same inputs in the
# same order on every run, so a green run here is green in CI; `make fuzz` passes 0 (random).
seed=${FUZZ_SEED:-1}
cd "$(dirname "$0")/.."
# One -sanitize= list, last on the command line: given as two flags (SwiftPM's --sanitize=fuzzer
# --sanitize=address), swiftc keeps only the last, so the Swift code got either no coverage or no
# ASan. (--sanitize=fuzzer stays for SwiftPM's linking of the targets.) The check below fails the
# run when the binaries carry no coverage counters.
swift build -c release --package-path Fuzz --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address -Xcc -fsanitize=fuzzer-no-link,address --build-path .build/fuzz 2>&1 | grep -E "error|warning: .*FormGate|Build complete" || true
# FUZZ_TARGETS runs some targets only; their rows replace theirs in an existing report.
all_targets=(FuzzMultipart FuzzHeaderValues FuzzHTTPHead FuzzChunked)
read -r -a targets <<< "${FUZZ_TARGETS:-${all_targets[*]}}"
for target in "${all_targets[@]}"; do
    size=$(readelf -SW ".build/fuzz/release/$target" | awk '$2 == "__sancov_cntrs" { print $6 }')
    counters=$((16#${size:-0}))
    if [ "$counters" -lt 1000 ]; then
        echo "fuzz: $target has ${counters:-no} coverage counters: not instrumented" >&2
        exit 1
    fi
done
failed=0
report=".build/fuzz-report.txt"
kept=""
if [ -n "${FUZZ_TARGETS:-}" ] && [ -f "$report" ]; then
    kept=$(awk -v run=" ${targets[*]} " 'NR > 1 && index(run, " " $1 " ") == 0' "$report")
fi
: > "$report"
printf '%-18s %14s %8s %8s %9s\n' target executions seconds crashes coverage | tee -a "$report"
[ -n "$kept" ] && echo "$kept" >> "$report"
for target in "${targets[@]}"; do
    # FUZZ_SECONDS_<target> overrides SECONDS for one target (the multipart target is the slowest).
    override="FUZZ_SECONDS_$target"
    target_seconds=${!override:-$seconds}
    # The HTTP head harness scans at most 4 KiB: longer inputs only cost time.
    max_len=8192
    [ "$target" = FuzzHTTPHead ] && max_len=4200
    corpus=".build/fuzz-corpus/$target"
    mkdir -p "$corpus"
    log=".build/fuzz-$target.log"
    set +e
    SWIFT_BACKTRACE=enable=no ".build/fuzz/release/$target" "$corpus" "Fuzz/Seeds/$target" "Fuzz/Regressions/$target" -max_total_time="$target_seconds" \
        -max_len="$max_len" -seed="$seed" -timeout=30 -report_slow_units=60 -rss_limit_mb=2048 -artifact_prefix="Fuzz/Regressions/$target/crash-" -print_final_stats=1 >"$log" 2>&1
    status=$?
    set -e
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    coverage=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$')
    crashes=0
    if [ $status -ne 0 ]; then
        crashes=1
        failed=1
        tail -30 "$log"
    fi
    printf '%-18s %14s %8s %8s %9s\n' "$target" "${runs:-0}" "$target_seconds" "$crashes" "${coverage:-0}" | tee -a "$report"
done
rows=$(awk 'NR > 1' "$report" | wc -l)
crashed=$(awk 'NR > 1 && $4 > 0' "$report" | wc -l)
echo "fuzz report: $report"
echo "fuzz: $(( rows - crashed )) passed, $crashed failed"
exit $failed
