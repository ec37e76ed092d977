#!/usr/bin/env bash
# Instructions per 4 KiB upload, FormGate beside nginx, counted by callgrind.
#
#   scripts/profile/instructions.sh h1|h2 [REQUESTS]        (after `make bench` built its tools)
#
# h2: each proxy over TLS (ALPN h2), h2load posting the bench's 4 KiB body over 64 connections
# x 10 streams: FormGate's pass-through route against nginx h2. h1: plain HTTP/1.1, h2load --h1
# over 64 keep-alive connections: FormGate's pass-through and rules routes against nginx. Each
# proxy runs one worker under `valgrind --tool=callgrind` in front of the bench's verifying sink
# (.build/bench/sink); the first 640 requests are uncounted (warm-up: handshakes, pools), then
# REQUESTS (6400) counted. Printed: the proxy's instructions per request, in all and by object
# (the proxy's own code, libc, libcrypto, ...). Instructions are what callgrind counts, not
# time: how the requests batch moves them a little (about 0.5 K between two runs of one build),
# the machine's load far less than it moves timings, so two builds can be compared on a shared
# machine. Over h2 the 64 TLS handshakes of the counted run are in the figures (about 27 K
# instructions per request of libcrypto's at 6400 requests).
#
# FormGate runs the release binary with its debug information stripped into a copy (valgrind
# 3.19 cannot read the DWARF 5 that Swift 6 writes); nginx is Debian's, `master_process off`.
# The configs (and over h2 the certificate) are the bench's own (scripts/bench.py).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
protocol=${1:?usage: instructions.sh h1|h2 [REQUESTS]}
requests=${2:-6400}
case $protocol in h1 | h2) ;; *) echo "instructions: h1 or h2, not $protocol" >&2; exit 2 ;; esac
tools=$root/.build/bench
work=$tools/instructions-$protocol
binary=${BENCH_BINARY:-$root/.build/release/formgate}
for tool in valgrind callgrind_annotate h2load nginx openssl python3; do
    command -v $tool > /dev/null || { echo "instructions: $tool is missing (make bench installs it)" >&2; exit 1; }
done
[ -x "$tools/sink" ] && [ -x "$tools/h2body" ] || { echo "instructions: run make bench first (it builds $tools/sink)" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work/nginx"
body=$tools/h2body-10000-4096
[ -f "$body" ] || "$tools/h2body" -out "$body" -seed 10000 -size 4096
cp "$binary" "$work/formgate" && strip --strip-debug "$work/formgate"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2> /dev/null || true; done; }
trap cleanup EXIT

"$tools/sink" > "$work/sink.out" 2> "$work/sink.log" &
pids+=($!)
for _ in $(seq 100); do [ -s "$work/sink.out" ] && break; sleep 0.05; done
sink_port=$(head -1 "$work/sink.out" | sed 's/.*://')

post() {  # post PORT COUNT MODE: h2load's summary line of 2xx statuses
    local scheme=https options=(-m 10)
    [ "$protocol" = h1 ] && scheme=http options=(--h1)
    h2load -n "$2" -c 64 "${options[@]}" -t 1 -d "$body" \
        -H "content-type: multipart/form-data; boundary=BenchBoundary-7MA4YWxkTrZu0gW-kq9" \
        -H "x-bench: $3 10000 4096" "$scheme://127.0.0.1:$1/upload" | grep 'status codes'
}

measure() {  # measure NAME PORT MODE COMMAND...: instructions per request by object
    local name=$1 port=$2 mode=$3
    shift 3
    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$work/$name.%p" "$@" \
        > "$work/$name.valgrind.log" 2>&1 &
    local pid=$!
    pids+=($pid)
    for _ in $(seq 200); do
        (echo > "/dev/tcp/127.0.0.1/$port") 2> /dev/null && break
        sleep 0.1
    done
    post "$port" 640 "$mode" > /dev/null
    callgrind_control -i on "$pid" > /dev/null 2>&1
    local statuses
    statuses=$(post "$port" "$requests" "$mode")
    callgrind_control -i off "$pid" > /dev/null 2>&1
    callgrind_control -d "$pid" > /dev/null 2>&1
    kill "$pid" && wait "$pid" 2> /dev/null || true
    case "$statuses" in *"$requests 2xx"*) ;; *) echo "instructions: $name: $statuses" >&2; exit 1 ;; esac
    local dump
    dump=$(ls -t "$work/$name".*.1 | head -1)
    callgrind_annotate --threshold=100 "$dump" 2> /dev/null | python3 -c '
import collections, re, sys
name, requests = sys.argv[1], int(sys.argv[2])
by_object = collections.Counter()
for line in sys.stdin:
    match = re.match(r"\s*([\d,]+) \(.*\[(.*)\]\s*$", line)
    if match:
        by_object[match.group(2).split("/")[-1]] += int(match.group(1).replace(",", ""))
total = sum(by_object.values())
parts = ", ".join(f"{obj} {count / requests / 1000:.1f} K" for obj, count in by_object.most_common(6))
print(f"{name:13} {total / requests / 1000:6.1f} K instructions per request ({parts})")
' "$name" "$requests"
}

fg_port=$(free_port)
rules_port=$(free_port)
nginx_port=$(free_port)
# The bench's own configs (scripts/bench.py: formgate_config(), formgate_h2_config(),
# nginx_config(), nginx_h2_config(), certificate()) with one worker each, and nginx without its
# master process: callgrind counts the process it started.
python3 - "$root" "$work" "$protocol" "$fg_port" "$rules_port" "$nginx_port" "$sink_port" << 'EOF'
import os, sys
root, work, protocol = sys.argv[1], sys.argv[2], sys.argv[3]
fg_port, rules_port, nginx_port, sink_port = map(int, sys.argv[4:8])
sys.argv = sys.argv[:1]
sys.path.insert(0, os.path.join(root, "scripts"))
import bench
bench.cores = 1
bench.work = work
temp = os.path.join(work, "nginx")
if protocol == "h2":
    cert, key = bench.certificate()
    configs = {"formgate.yaml": bench.formgate_h2_config("passthrough", fg_port, sink_port, True, cert, key)}
    nginx = bench.nginx_h2_config(nginx_port, sink_port, temp, True, cert, key)
else:
    configs = {"formgate.yaml": bench.formgate_config("passthrough", fg_port, sink_port),
               "formgate-rules.yaml": bench.formgate_config("rules", rules_port, sink_port)}
    nginx = bench.nginx_config(nginx_port, sink_port, temp)
for name, text in configs.items():
    with open(os.path.join(work, name), "w") as config:
        config.write(text)
with open(os.path.join(temp, "nginx.conf"), "w") as config:
    config.write(nginx.replace("daemon off;", "daemon off;\nmaster_process off;", 1))
EOF
measure formgate "$fg_port" raw "$work/formgate" run -c "$work/formgate.yaml"
if [ "$protocol" = h1 ]; then
    measure formgate-rules "$rules_port" rules "$work/formgate" run -c "$work/formgate-rules.yaml"
fi
measure nginx "$nginx_port" raw nginx -c "$work/nginx/nginx.conf" -p "$work/nginx"
