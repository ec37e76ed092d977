"""One multipart upload with Debian's httpx over HTTP/2 only (`http1=False`): prior-knowledge
h2c for http:// URLs, ALPN h2 for https:// ones.

Usage: h2_httpx_client.py URL --file PATH [--field NAME=VALUE ...] [--filename NAME]
           [--type TYPE] [--cafile CA] [--resolve HOST:IP]
The file goes as the `doc` part, read by httpx in pieces from the open file (never whole in
memory). Prints {"status", "version", "body"} as JSON.
"""
import argparse
import json
import os
import socket

import httpx


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--file", required=True)
    parser.add_argument("--filename")
    parser.add_argument("--type", default="application/octet-stream")
    parser.add_argument("--field", action="append", default=[])
    parser.add_argument("--cafile")
    parser.add_argument("--resolve")
    args = parser.parse_args()
    if args.resolve:
        # curl's --resolve: the certificate is checked against the URL's name, the socket goes to IP.
        name, address = args.resolve.split(":", 1)
        original = socket.getaddrinfo

        def resolve(host, *rest, **options):
            return original(address if host == name else host, *rest, **options)

        socket.getaddrinfo = resolve
    fields = dict(field.split("=", 1) for field in args.field)
    filename = args.filename or os.path.basename(args.file)
    with open(args.file, "rb") as handle, httpx.Client(
            http1=False, http2=True, verify=args.cafile or True, timeout=600) as client:
        response = client.post(args.url, data=fields, files={"doc": (filename, handle, args.type)})
    try:
        body = response.json()
    except ValueError:
        body = response.text
    print(json.dumps({"status": response.status_code, "version": response.http_version, "body": body}))


main()
