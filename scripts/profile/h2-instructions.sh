#!/usr/bin/env bash
# Instructions per h2 4 KiB upload over TLS, FormGate against nginx (`make h2-instructions`):
# scripts/profile/instructions.sh h2 [REQUESTS].
exec "$(dirname "$0")/instructions.sh" h2 "$@"
