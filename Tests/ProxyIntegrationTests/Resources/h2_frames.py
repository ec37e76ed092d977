#!/usr/bin/env python3
"""Sends one request per stream as exact HTTP/2 frames and reports what the server did with each.

    h2_frames.py HOST PORT [--tls --cafile CA --sni NAME] --path P [--method POST]
                 [--header NAME=VALUE ...] [--body FILE] [--streams K] [--deadline S] STEP ...

For each of K streams (1, 3, 5, ...) the STEPs are sent in order, as frames laid out here:

    headers        HEADERS (END_HEADERS), :method, :scheme, :authority, :path, then --header
    headers-end    the same with END_STREAM
    body           --body's bytes as DATA frames of at most 16 KiB, no END_STREAM
    body-end       the same, END_STREAM on the last (one empty DATA with END_STREAM if empty)
    prefix:N       the first N bytes of --body as DATA frames, no END_STREAM
    empty          one empty DATA frame, no END_STREAM
    byte-end       one DATA frame of one byte ("x") with END_STREAM
    headers-open   HEADERS without END_HEADERS (the header block begun, its CONTINUATION never
                   sent): nothing else may follow on the connection (RFC 9113 §6.10)
    sync           a PING, then reading until its ACK: the server has taken in every frame before
                   it, so what follows arrives in another read, after the server acted on those

The :path and the fields go out as given (h2's header validation is off: Resources/h2_hostile.py's
Connection, whose HPACK encoder keeps the server's decoding context). The header blocks go
through h2, so it keeps the connection's flow-control windows and answers SETTINGS and PINGs;
the DATA frames are raw bytes, whatever the content-length says.

Output, one JSON object a line, flushed as it happens:
    {"event": "sent", "streams": [1, 3, ...]}
    {"event": "ended", "stream", "status", "rst", "body", "t"}    per stream, once the server's
        response on it ended (END_STREAM) or it reset the stream (RST_STREAM)
    {"event": "closed", "goaway", "t"}                             a GOAWAY came or the connection closed
                                                                  (t: when it closed, or when seen)
    {"event": "done", "frames"}                                   every stream ended, or --deadline passed
The script keeps the connection open and reading until every stream ended, the connection
closed, or --deadline (120 s) passed: a test that has seen what it needs stops it (SIGTERM).
"""
import argparse
import json
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from h2_hostile import DATA, END_STREAM, HEADERS, Connection, frame  # noqa: E402

PIECE = 16384


def emit(**fields):
    print(json.dumps(fields), flush=True)


def data_frames(stream, body, end):
    """`body` as DATA frames of at most PIECE bytes, END_STREAM on the last when `end`."""
    pieces = [body[at:at + PIECE] for at in range(0, len(body), PIECE)] or [b""]
    return b"".join(frame(DATA, END_STREAM if end and index == len(pieces) - 1 else 0, stream, piece)
                    for index, piece in enumerate(pieces))


def send_steps(conn, options, stream, body):
    """The STEPs for one stream."""
    headers = [(":method", options.method), (":scheme", "https" if options.tls else "http"),
               (":authority", options.sni or options.host), (":path", options.path)]
    headers += [tuple(field.split("=", 1)) for field in options.header]
    for step in options.steps:
        if step in ("headers", "headers-end"):
            conn.h2.send_headers(stream, headers, end_stream=step == "headers-end")
            conn.flush()
        elif step in ("body", "body-end"):
            conn.send(data_frames(stream, body, step == "body-end"))
        elif step.startswith("prefix:"):
            conn.send(data_frames(stream, body[:int(step[len("prefix:"):])], False))
        elif step == "empty":
            conn.send(frame(DATA, 0, stream))
        elif step == "headers-open":
            conn.send(frame(HEADERS, 0, stream, conn.headers_block(headers)))
        elif step == "byte-end":
            conn.send(frame(DATA, END_STREAM, stream, b"x"))
        elif step == "sync":
            conn.alive()
        else:
            raise SystemExit(f"unknown step {step!r}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("host")
    parser.add_argument("port", type=int)
    parser.add_argument("--tls", action="store_true", help="TLS with ALPN h2 (else prior-knowledge h2c)")
    parser.add_argument("--cafile", help="the CA that signed the server's certificate (with --tls)")
    parser.add_argument("--sni", help="the server name to send and verify (with --tls; also :authority)")
    parser.add_argument("--path", required=True)
    parser.add_argument("--method", default="POST")
    parser.add_argument("--header", action="append", default=[], help="NAME=VALUE, sent as given")
    parser.add_argument("--body", help="the file whose bytes the body steps send")
    parser.add_argument("--streams", type=int, default=1)
    parser.add_argument("--deadline", type=float, default=120.0)
    parser.add_argument("steps", nargs="+")
    options = parser.parse_args()
    # A test process may start its children with SIGTERM blocked: the test's stop must end this one.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    body = open(options.body, "rb").read() if options.body else b""
    conn = Connection(options)
    streams = [1 + 2 * index for index in range(options.streams)]
    for stream in streams:
        send_steps(conn, options, stream, body)
    emit(event="sent", streams=streams)
    reported = set()
    deadline = time.monotonic() + options.deadline
    while time.monotonic() < deadline:
        for stream in streams:
            if stream not in reported and (stream in conn.ended or stream in conn.rst):
                reported.add(stream)
                emit(event="ended", stream=stream, status=conn.status.get(stream), rst=conn.rst.get(stream),
                     body=conn.bodies.get(stream, b"").decode("latin-1"), t=conn.elapsed())
        if len(reported) == len(streams) or conn.goaway or conn.closed_at:
            break
        conn.pump(0.2)
    if conn.goaway or conn.closed_at:
        emit(event="closed", goaway=conn.goaway, t=conn.closed_at or conn.elapsed())
    emit(event="done", frames=conn.frames[:50])
    # Every stream ended: the connection stays open (and answered) until the test stops it.
    while not conn.closed_at and time.monotonic() < deadline:
        conn.pump(0.2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
