#!/usr/bin/env bash
# Builds FormGate's libFuzzer targets (Fuzz/, ASan) and runs each for SECONDS (default 30),
# seeded from Fuzz/Seeds/<target> and Fuzz/Regressions/<target> (crashes found are written
# there: commit them, and they are replayed on every run). Prints executions and crashes per target; exits 1 on any crash.
set -euo pipefail
seconds=${1:-30}
# A fixed seed (FUZZ_SEED, default 1: what `make test` uses) explores the same inputs in the
# same order on every run, so a green run here is green in CI; `make fuzz` passes 0 (random).
seed=${FUZZ_SEED:-1}
cd "$(dirname "$0")/.."
swift build -c release --package-path Fuzz --sanitize=fuzzer --sanitize=address --build-path .build/fuzz 2>&1 | grep -E "error|warning: .*FormGate|Build complete" || true
targets=(FuzzMultipart FuzzHeaderValues FuzzHTTPHead FuzzChunked)
failed=0
report=".build/fuzz-report.txt"
: > "$report"
printf '%-18s %14s %8s %8s\n' target executions seconds crashes | tee -a "$report"
for target in "${targets[@]}"; do
    corpus=".build/fuzz-corpus/$target"
    mkdir -p "$corpus"
    log=".build/fuzz-$target.log"
    set +e
    SWIFT_BACKTRACE=enable=no ".build/fuzz/release/$target" "$corpus" "Fuzz/Seeds/$target" "Fuzz/Regressions/$target" -max_total_time="$seconds" \
        -max_len=8192 -seed="$seed" -timeout=10 -rss_limit_mb=2048 -artifact_prefix="Fuzz/Regressions/$target/crash-" -print_final_stats=1 >"$log" 2>&1
    status=$?
    set -e
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    crashes=0
    if [ $status -ne 0 ]; then
        crashes=1
        failed=1
        tail -30 "$log"
    fi
    printf '%-18s %14s %8s %8s\n' "$target" "${runs:-0}" "$seconds" "$crashes" | tee -a "$report"
done
crashed=$(awk 'NR > 1 && $4 > 0' "$report" | wc -l)
echo "fuzz report: $report"
echo "fuzz: $(( ${#targets[@]} - crashed )) passed, $crashed failed"
exit $failed
