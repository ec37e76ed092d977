#!/usr/bin/env bash
# `make run`: the demo upstream on 127.0.0.1:9000 and FormGate on conf/formgate.yaml in front
# of it (127.0.0.1:8080). Ctrl-C stops both.
set -euo pipefail
bin=.build/release/formgate
"$bin" demo-upstream --listen 127.0.0.1:9000 &
demo=$!
trap 'kill $demo 2>/dev/null || true' EXIT
sleep 0.3
cat <<'MSG'

FormGate is starting on http://127.0.0.1:8080 in front of the demo upstream (127.0.0.1:9000).
Try, from another terminal:

  printf 'hello' > /tmp/hello.txt
  curl -s -F title=Holiday -F photo=@/tmp/hello.txt http://127.0.0.1:8080/upload

The demo upstream answers with JSON describing what it received: the fields, and each file's
name, filename, content type, size and sha256, under FormGate's new boundary.
Ctrl-C stops both servers.

MSG
"$bin" run -c conf/formgate.yaml
