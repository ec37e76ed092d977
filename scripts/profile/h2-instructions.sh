#!/usr/bin/env bash
# Instructions per h2 4 KiB upload over TLS, FormGate against nginx, counted by callgrind.
#
#   scripts/profile/h2-instructions.sh [REQUESTS]        (after `make bench` built its tools)
#
# Each proxy runs one worker under `valgrind --tool=callgrind` in front of the bench's verifying
# sink (.build/bench/sink); h2load posts the bench's 4 KiB body over 64 connections x 10
# streams, first 640 requests uncounted (warm-up: handshakes, pools), then REQUESTS (6400)
# counted. Printed: the proxy's instructions per request, in all and by object (the proxy's own
# code, libc, libcrypto, ...). Instructions are what callgrind counts, not time: the same
# binary and inputs give the same figures whatever else the machine does, so two builds can be
# compared without the noise of a shared machine. The 64 TLS handshakes of the counted run are
# in the figures (about 27 K instructions per request of libcrypto's at 6400 requests).
#
# FormGate runs the release binary with its debug information stripped into a copy (valgrind
# 3.19 cannot read the DWARF 5 that Swift 6 writes); nginx is Debian's, `master_process off`.
# The configs are the bench's (scripts/bench.py): FormGate's pass-through route, nginx h2 with
# proxy_request_buffering off and upstream keepalive.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
requests=${1:-6400}
tools=$root/.build/bench
work=$tools/instructions
binary=${BENCH_BINARY:-$root/.build/release/formgate}
for tool in valgrind callgrind_annotate h2load nginx openssl; do
    command -v $tool > /dev/null || { echo "h2-instructions: $tool is missing (make bench installs it)" >&2; exit 1; }
done
[ -x "$tools/sink" ] && [ -x "$tools/h2body" ] || { echo "h2-instructions: run make bench first (it builds $tools/sink)" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work/nginx"
body=$tools/h2body-10000-4096
[ -f "$body" ] || "$tools/h2body" -out "$body" -seed 10000 -size 4096
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=127.0.0.1 \
    -keyout "$work/key.pem" -out "$work/cert.pem" 2> /dev/null
cp "$binary" "$work/formgate" && strip --strip-debug "$work/formgate"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2> /dev/null || true; done; }
trap cleanup EXIT

"$tools/sink" > "$work/sink.out" 2> "$work/sink.log" &
pids+=($!)
for _ in $(seq 100); do [ -s "$work/sink.out" ] && break; sleep 0.05; done
sink_port=$(head -1 "$work/sink.out" | sed 's/.*://')

post() {  # post PORT COUNT: h2load's summary line of 2xx statuses
    h2load -n "$2" -c 64 -m 10 -t 1 -d "$body" \
        -H "content-type: multipart/form-data; boundary=BenchBoundary-7MA4YWxkTrZu0gW-kq9" \
        -H "x-bench: raw 10000 4096" "https://127.0.0.1:$1/upload" | grep 'status codes'
}

measure() {  # measure NAME PORT COMMAND...: instructions per request by object
    local name=$1 port=$2
    shift 2
    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$work/$name.%p" "$@" \
        > "$work/$name.valgrind.log" 2>&1 &
    local pid=$!
    pids+=($pid)
    for _ in $(seq 200); do
        (echo > "/dev/tcp/127.0.0.1/$port") 2> /dev/null && break
        sleep 0.1
    done
    post "$port" 640 > /dev/null
    callgrind_control -i on "$pid" > /dev/null 2>&1
    local statuses
    statuses=$(post "$port" "$requests")
    callgrind_control -i off "$pid" > /dev/null 2>&1
    callgrind_control -d "$pid" > /dev/null 2>&1
    kill "$pid" && wait "$pid" 2> /dev/null || true
    case "$statuses" in *"$requests 2xx"*) ;; *) echo "h2-instructions: $name: $statuses" >&2; exit 1 ;; esac
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
print(f"{name:9} {total / requests / 1000:6.1f} K instructions per request ({parts})")
' "$name" "$requests"
}

port=$(free_port)
cat > "$work/formgate.yaml" << EOF
listen:
  - { address: 127.0.0.1:$port, tls: { certificates: [{ cert: $work/cert.pem, key: $work/key.pem }] } }
workers: 1
upstream: http://127.0.0.1:$sink_port
access_log: off
limits: { body_bytes: 64GiB, file_bytes: 64GiB }
routes:
  - name: passthrough
    match: { path: /upload }
EOF
measure formgate "$port" "$work/formgate" run -c "$work/formgate.yaml"

port=$(free_port)
cat > "$work/nginx/nginx.conf" << EOF
worker_processes 1;
master_process off;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_requests 1000000;
    client_max_body_size 0;
    client_body_buffer_size 512k;
    http2_body_preread_size 512k;
    http2_max_concurrent_streams 128;
    client_body_temp_path $work/nginx/body;
    proxy_temp_path $work/nginx/proxy;
    upstream sink { server 127.0.0.1:$sink_port; keepalive 1024; keepalive_requests 1000000; }
    server {
        listen 127.0.0.1:$port ssl http2;
        ssl_certificate $work/cert.pem;
        ssl_certificate_key $work/key.pem;
        location / {
            proxy_pass http://sink;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_request_buffering off;
        }
    }
}
EOF
measure nginx "$port" nginx -c "$work/nginx/nginx.conf"
