"""Concurrent multipart uploads on one HTTP/2 connection, with Debian's httpx (and h2).

Usage: h2_uploads.py URL COUNT FILE [--cafile CA] [--resolve HOST:IP]
Posts FILE as the `file` part (plus a `title=two` field) COUNT times at once over one
connection (prior-knowledge h2c for http://, ALPN h2 for https://). Prints one JSON object:
{"versions": [...], "statuses": [...], "receipts": [upstream answers...]}.
"""
import asyncio
import json
import sys

import httpx


async def main():
    url, count, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    verify = True
    if "--cafile" in sys.argv:
        verify = sys.argv[sys.argv.index("--cafile") + 1]
    content = open(path, "rb").read()
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    async with httpx.AsyncClient(http1=False, http2=True, verify=verify, limits=limits, timeout=120) as client:
        async def one(index):
            files = {"file": (f"upload-{index}.bin", content, "application/octet-stream")}
            return await client.post(url, data={"title": "two"}, files=files)

        responses = await asyncio.gather(*(one(index) for index in range(count)))
    print(json.dumps({
        "versions": [response.http_version for response in responses],
        "statuses": [response.status_code for response in responses],
        "receipts": [response.json() if response.status_code == 200 else response.text for response in responses],
    }))


asyncio.run(main())
