#!/bin/sh
# Creates the compose stack's secrets (compose.yaml, `secrets:`) with random values:
#   docker/secrets/redis_password   Redis's requirepass; FormGate reads it through redis.password_file
#   docker/secrets/s3_secret        MinIO's root password; FormGate signs with it (secret_key_file)
#   docker/secrets/admin_token      the replicas' admin bearer token (admin.token_file): /metrics
#                                   and the live view at http://127.0.0.1:9901/?access_token=…
# An existing file is kept (delete it to get a new one; then `docker compose down -v` too, since
# MinIO keeps its first credentials in its volume). The directory is 0700, so other users of
# this machine cannot read the files; the files are 0644 because compose (without Swarm)
# bind-mounts them with their own mode and the containers' users (FormGate uid 10001, redis)
# must read them. Hex values: no character a URL or a config file would need to escape.
set -eu
dir="$(dirname "$0")/secrets"
mkdir -p "$dir"
chmod 700 "$dir"
for name in redis_password s3_secret admin_token; do
    file="$dir/$name"
    if [ -s "$file" ]; then
        echo "$file: kept"
    else
        (umask 077 && od -An -vtx1 -N32 /dev/urandom | tr -d ' \n' > "$file" && echo >> "$file")
        echo "$file: created"
    fi
    chmod 644 "$file"
done
