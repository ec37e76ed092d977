#!/usr/bin/env python3
"""Hostile HTTP/2 clients for FormGate's h2 listener (and for any h2 server, to check the cases).

    h2_hostile.py HOST PORT [--tls --cafile F --sni NAME] [--path /upload] [--tag] [--case NAME ...]
                  [--json] [--list] [--deadline S] [--slow-deadline S] [--pid PID] [--http1-port P]

Each case opens its own connection, does one hostile thing (or, for the controls, one thing
right) and records what the server did: every frame received (type, stream, flags, error code),
the response status per stream, GOAWAY and RST_STREAM codes, whether and when the connection
closed. The verdict compares that record with what RFC 9113 requires of the server:

  pass      the server did what the RFC requires (for a malformed request, a 4xx response
            counts: §8.1.1 lets a server answer before it closes or resets the stream)
  deviates  the server refused in another way that is as safe: a connection error where a
            stream error does, another error code than the one the RFC names, a close without
            the GOAWAY the RFC says it SHOULD send
  fail      the server served what it must refuse, ignored it, hung, took a whole flood
            (§10.5: a flood passes only when a GOAWAY ENHANCE_YOUR_CALM ends it before its last
            frame), or does not speak h2 (no SETTINGS: §3.4)
  n/a       the case cannot be run against this server (the reason is given)
  error     the client failed (TLS, ALPN): no verdict on the server

Verdicts come from events: a case waits for the frame or the close that decides it, and its
deadline (--deadline, 10 s; --slow-deadline, 90 s, for the idle and zero-window timeouts) only
ends a case the server leaves hanging. Requests go to --path with a small valid multipart body
unless the case is about the body; with --tag, to --path?case=NAME, so that what an upstream
received can be told apart by case. Before the verdict a PING is sent and its ACK awaited (or
the GOAWAY or close that comes instead): the server has acted on every frame of the case.
Floods other than CONTINUATION go in lock step, a PING after every 100 frames and its ACK
awaited before the next 100, so the frames sent before the GOAWAY came are at most 100 more
than the server took. Output: one line per case, or with --json one JSON object per line (and
a summary line last). With --pid, each case's line adds the server process's CPU time and peak
RSS growth over the case, and the summary its open descriptors and RSS before the cases and
after (once the descriptors are back to where they were, or --slow-deadline later). Exit
status 0 when no case failed or erred, 1 otherwise.

A --json line holds: case, rfc (what the RFC requires), verdict, note, outcome (the server's
answer without times, to pin: "RST_STREAM PROTOCOL_ERROR", "status 200, GOAWAY NO_ERROR",
"HTTP/1.1 200", "closed"), seconds, stream (the one the verdict is about), status (its
:status), rst (its RST_STREAM code), goaway (error, last_stream, debug, t), closed_at (seconds
after connecting, or null), connection_alive_after (a PING was answered after the case), flood
(unit "frame" or "stream", count, sent, accepted: the units sent before the GOAWAY or close
came, or for rapid_reset the streams up to the GOAWAY's last stream id), file (bytes and
sha256 of the file part of the multipart request the case meant to be served), cpu_seconds
and peak_rss_growth_kib (with --pid), frames_received, frames (each with t, type, stream,
flags and, as they apply, error, status, increment, length, settings; a flood's answers cut to
the first 30 and last 10), response (the first 1,000 bytes of that stream's response body)
and http1 (bytes that were not HTTP/2).

Frames go out through the `h2` library (python3-h2, validation and normalisation of outbound
headers turned off so it sends what a hostile client sends) or, where h2 cannot build them,
as bytes laid out here (9-byte frame header + payload) with header blocks from h2's own HPACK
encoder, so the compression state stays the server's. Frames coming in are parsed with
`hyperframe`, whatever h2 thinks of them.
"""
import argparse
import base64
import hashlib
import json
import os
import re
import select
import socket
import ssl
import struct
import sys
import time

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import hpack
import hyperframe.frame as hf

# Frame types and flags (RFC 9113 §6).
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = range(10)
END_STREAM, ACK, END_HEADERS, PRIORITY_FLAG = 0x1, 0x1, 0x4, 0x20
# Settings identifiers.
HEADER_TABLE_SIZE, ENABLE_PUSH, MAX_CONCURRENT_STREAMS, INITIAL_WINDOW_SIZE, MAX_FRAME_SIZE = 1, 2, 3, 4, 5
# Error codes (RFC 9113 §7).
CODES = {0: "NO_ERROR", 1: "PROTOCOL_ERROR", 2: "INTERNAL_ERROR", 3: "FLOW_CONTROL_ERROR", 4: "SETTINGS_TIMEOUT",
         5: "STREAM_CLOSED", 6: "FRAME_SIZE_ERROR", 7: "REFUSED_STREAM", 8: "CANCEL", 9: "COMPRESSION_ERROR",
         10: "CONNECT_ERROR", 11: "ENHANCE_YOUR_CALM", 12: "INADEQUATE_SECURITY", 13: "HTTP_1_1_REQUIRED"}
CODE = {name: number for number, name in CODES.items()}
MAX_WINDOW = 2**31 - 1
BOUNDARY = "h2hostile-7d3f9a"
CONTENT_TYPE = f"multipart/form-data; boundary={BOUNDARY}"


FILE = b"hello h2\n"


def multipart(content=FILE):
    """A small valid multipart/form-data body: a text field and one file part with `content`."""
    return (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nhostile\r\n"
            f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"upload\"; filename=\"a.txt\"\r\n"
            f"Content-Type: text/plain\r\n\r\n").encode() + content + f"\r\n--{BOUNDARY}--\r\n".encode()


def frame(kind, flags, stream, payload=b""):
    """One frame as bytes, laid out by hand: any type, flags and stream id, whatever the RFC says."""
    return struct.pack(">I", len(payload))[1:] + struct.pack(">BBI", kind, flags, stream & 0xFFFFFFFF) + payload


def settings_payload(*pairs):
    """A SETTINGS payload from (identifier, value) pairs, legal or not."""
    return b"".join(struct.pack(">HI", key, value) for key, value in pairs)


# --- one connection and its record
class Connection:
    """A client connection: sends through h2 or raw bytes, records every frame the server sends."""

    def __init__(self, options, settings=None, auto_window=True, handshake=True):
        """Connects (TLS with ALPN h2 when asked) and, with `handshake`, sends the preface and
        SETTINGS (plus `settings`, h2 setting codes to values); `auto_window` off leaves the
        response windows closed as the server fills them."""
        self.options, self.auto_window = options, auto_window
        self.opened = time.monotonic()
        self.sock = self._connect()
        config = h2.config.H2Configuration(client_side=True, header_encoding=None, validate_outbound_headers=False,
                                           normalize_outbound_headers=False, validate_inbound_headers=False,
                                           normalize_inbound_headers=False)
        self.h2 = h2.connection.H2Connection(config)
        self.h2_ok = True  # false once h2 refuses what the server sent after our raw frames
        self.buffer = b""
        self.frames, self.status, self.rst, self.ended = [], {}, {}, set()
        self.goaway, self.closed_at, self.server_settings, self.other_bytes = None, None, {}, b""
        self.pings_acked, self.decoder, self.block = 0, hpack.Decoder(), b""
        self.ping_acks = set()  # the payloads of the PING ACKs received
        self.flood = None  # a flood case's count of what it sent and what the server took
        self.file = None  # the file content of the multipart request the case sent, if any
        self.not_applicable, self.served_before, self.served_after = None, None, None
        self.handshake, self.saw_settings = handshake, False
        self.bodies = {}  # stream id: the first 64 KiB of the response body
        if handshake:
            self.h2.initiate_connection()
            if settings:
                self.h2.update_settings(settings)
            self.flush()

    def _connect(self):
        raw = socket.create_connection((self.options.host, self.options.port), timeout=self.options.deadline)
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if not self.options.tls:
            return raw
        context = ssl.create_default_context(cafile=self.options.cafile)
        context.set_alpn_protocols(["h2"])
        tls = context.wrap_socket(raw, server_hostname=self.options.sni or self.options.host)
        if tls.selected_alpn_protocol() != "h2":
            raise RuntimeError(f"ALPN chose {tls.selected_alpn_protocol()!r}, not h2")
        return tls

    # sending
    def flush(self):
        """Sends what h2 has queued (requests, ACKs, window updates)."""
        data = self.h2.data_to_send()
        if data:
            self.send(data)

    def send(self, data):
        """Sends bytes; a connection the server closed is recorded, not raised."""
        try:
            self.sock.sendall(data)
            return True
        except OSError:
            self._closed()
            return False

    def headers_block(self, headers):
        """An HPACK block from h2's encoder, so the server's decoding context stays in step."""
        return self.h2.encoder.encode([(name.encode() if isinstance(name, str) else name,
                                        value.encode() if isinstance(value, str) else value)
                                       for name, value in headers])

    def request(self, stream, headers, body=None, end=True):
        """A request through h2 (unvalidated): HEADERS, then the body as DATA within the windows.
        False when h2 stops it because the server reset the stream or h2 gave up on the
        connection: the record then says what the server did."""
        try:
            self.h2.send_headers(stream, headers, end_stream=end and body is None)
            self.flush()
            return body is None or self.send_body(stream, body, end)
        except h2.exceptions.ProtocolError:
            return False

    def send_body(self, stream, body, end=True):
        """DATA through h2, waiting for WINDOW_UPDATEs whenever a window is exhausted."""
        view, deadline = memoryview(body), time.monotonic() + self.options.deadline
        while view:
            if self.ended_or_closed(stream) or time.monotonic() > deadline:
                return False
            room = min(self.h2.local_flow_control_window(stream), self.h2.max_outbound_frame_size, len(view))
            if room <= 0:
                self.pump(0.5)
                continue
            self.h2.send_data(stream, bytes(view[:room]), end_stream=end and room == len(view))
            view = view[room:]
            self.flush()
        if end and not body:
            self.h2.end_stream(stream)
            self.flush()
        return True

    # receiving
    def pump(self, timeout):
        """Reads what arrives within `timeout` seconds and records it; False when nothing came."""
        if self.closed_at:
            return False
        if not (isinstance(self.sock, ssl.SSLSocket) and self.sock.pending()):
            readable, _, _ = select.select([self.sock], [], [], max(timeout, 0))
            if not readable:
                return False
        try:
            data = self.sock.recv(65536)
        except (ssl.SSLWantReadError, socket.timeout):
            return False
        except OSError:
            data = b""
        if not data:
            self._closed()
            return True
        self._feed_h2(data)
        self.buffer += data
        self._parse()
        return True

    def _feed_h2(self, data):
        """h2 keeps the flow-control windows and answers SETTINGS and PING; if it refuses the
        server's frames (they concern streams opened raw), the raw side answers instead."""
        if not self.h2_ok:
            return
        try:
            for event in self.h2.receive_data(data):
                if isinstance(event, h2.events.DataReceived) and self.auto_window and event.flow_controlled_length:
                    self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            self.flush()
        except Exception:  # whatever h2 raises on input it refuses: the raw record goes on
            self.h2_ok = False
            self.h2.data_to_send()  # h2's own GOAWAY stays unsent: the server is the one judged

    def _parse(self):
        """Cuts the bytes received into frames and records each."""
        while len(self.buffer) >= 9:
            if not self.frames and not self.buffer.startswith(b"\x00") and self.server_settings == {}:
                # The server's first frame is a SETTINGS of a few bytes, so its length starts
                # with a zero byte: anything else is an HTTP/1.1 answer (or garbage).
                self.other_bytes += self.buffer
                self.buffer = b""
                return
            length = int.from_bytes(self.buffer[:3], "big")
            if len(self.buffer) < 9 + length:
                return
            header, body, self.buffer = self.buffer[:9], self.buffer[9:9 + length], self.buffer[9 + length:]
            try:
                parsed, _ = hf.Frame.parse_frame_header(memoryview(header))
                parsed.parse_body(memoryview(body))
            except Exception as error:  # a frame hyperframe refuses is recorded as such
                self.frames.append(dict(t=self.elapsed(), type=f"unparsable({header[3]})", stream=None,
                                        error=str(error)))
                continue
            self._record(parsed)

    def _record(self, parsed):
        """One received frame into the record; SETTINGS and PING answered when h2 gave up."""
        entry = dict(t=self.elapsed(), type=type(parsed).__name__.replace("Frame", "").upper(),
                     stream=parsed.stream_id, flags=sorted(parsed.flags))
        if isinstance(parsed, (hf.HeadersFrame, hf.ContinuationFrame)):
            entry["type"] = "HEADERS" if isinstance(parsed, hf.HeadersFrame) else "CONTINUATION"
            self._header_block(parsed, entry)
        elif isinstance(parsed, hf.RstStreamFrame):
            entry.update(type="RST_STREAM", error=CODES.get(parsed.error_code, parsed.error_code))
            self.rst[parsed.stream_id] = entry["error"]
        elif isinstance(parsed, hf.GoAwayFrame):
            entry.update(error=CODES.get(parsed.error_code, parsed.error_code), last_stream=parsed.last_stream_id,
                         debug=parsed.additional_data[:200].decode("latin-1"))
            self.goaway = entry
        elif isinstance(parsed, hf.SettingsFrame):
            self.saw_settings = True
            if "ACK" not in parsed.flags:
                entry["settings"] = {str(key): value for key, value in parsed.settings.items()}
                self.server_settings.update(parsed.settings)
                if not self.h2_ok:
                    self.send(frame(SETTINGS, ACK, 0))
        elif isinstance(parsed, hf.PingFrame):
            if "ACK" in parsed.flags:
                self.pings_acked += 1
                self.ping_acks.add(bytes(parsed.opaque_data))
            elif not self.h2_ok:
                self.send(frame(PING, ACK, 0, parsed.opaque_data))
        elif isinstance(parsed, hf.WindowUpdateFrame):
            entry.update(type="WINDOW_UPDATE", increment=parsed.window_increment)
        elif isinstance(parsed, hf.DataFrame):
            entry["length"] = len(parsed.data)
            kept = self.bodies.setdefault(parsed.stream_id, b"")
            self.bodies[parsed.stream_id] = kept + parsed.data[:max(0, 65536 - len(kept))]
        if "END_STREAM" in parsed.flags:
            self.ended.add(parsed.stream_id)
        self.frames.append(entry)

    def _header_block(self, parsed, entry):
        """Decodes the server's header blocks with a decoder of our own (fed every block in
        order, it keeps the server's HPACK context whatever h2 made of the frames): :status."""
        self.block += parsed.data
        if "END_HEADERS" not in parsed.flags:
            return
        block, self.block = self.block, b""
        try:
            fields = {name.decode(): value.decode("latin-1") for name, value in self.decoder.decode(block, raw=True)}
        except Exception as error:
            entry["error"] = f"undecodable header block: {error}"
            return
        if ":status" in fields:
            entry["status"] = int(fields[":status"])
            if self.status.get(parsed.stream_id) is None or self.status[parsed.stream_id] < 200:
                self.status[parsed.stream_id] = entry["status"]

    def _closed(self):
        if self.closed_at is None:
            self.closed_at = self.elapsed()
            self.frames.append(dict(t=self.closed_at, type="CLOSED"))

    def elapsed(self):
        return round(time.monotonic() - self.opened, 4)

    # waiting for events
    def wait(self, done, seconds=None):
        """Pumps until `done(self)` holds, the connection closes, or the deadline passes."""
        deadline = time.monotonic() + (self.options.deadline if seconds is None else seconds)
        while not done(self) and not self.closed_at:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self.pump(min(left, 1.0))
        return done(self)

    def ended_or_closed(self, stream):
        return stream in self.ended or stream in self.rst or self.goaway is not None or self.closed_at is not None

    def wait_stream(self, stream, seconds=None):
        """Until the stream's response ends, it is reset, a GOAWAY comes or the connection closes."""
        return self.wait(lambda c: c.ended_or_closed(stream), seconds)

    def wait_close(self, seconds):
        """Until the server closes the connection (after a GOAWAY it should)."""
        return self.wait(lambda c: c.closed_at is not None, seconds)

    def alive(self):
        """Whether the connection still works after the case: a PING is answered with an ACK."""
        if self.closed_at or self.goaway:
            return False
        before = self.pings_acked
        if not self.send(frame(PING, 0, 0, b"alive?\x00\x00")):
            return False
        return self.wait(lambda c: c.pings_acked > before, self.options.deadline)

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


# --- helpers the cases share
def request_headers(options, method="POST", path=None, extra=(), length=None):
    """A request's header list as h2 would send it; POSTs carry the multipart content type."""
    headers = [(":method", method), (":scheme", "https" if options.tls else "http"),
               (":authority", options.sni or options.host), (":path", options.path if path is None else path)]
    if method == "POST":
        headers.append(("content-type", CONTENT_TYPE))
    if length is not None:
        headers.append(("content-length", str(length)))
    return headers + list(extra)


def raw_headers(conn, stream, headers, end_stream=True):
    """A HEADERS frame with END_HEADERS, laid out by hand (any stream id, any header list)."""
    return frame(HEADERS, END_HEADERS | (END_STREAM if end_stream else 0), stream, conn.headers_block(headers))


def raw_get(conn, stream, options):
    """A GET sent as one raw HEADERS frame (for streams h2 does not know, or after h2 gave up)."""
    return conn.send(raw_headers(conn, stream, request_headers(options, method="GET")))


def still_served(conn, options, stream):
    """After abuse: a plain GET on `stream`, raw; True when it is answered 2xx to the end."""
    if conn.closed_at or conn.goaway:
        return False
    started = time.monotonic()
    raw_get(conn, stream, options)
    conn.wait_stream(stream)
    conn.served_after = round(time.monotonic() - started, 4)
    return stream in conn.ended and 200 <= (conn.status.get(stream) or 0) < 300


def post(conn, options, stream=1, extra=(), body=None, length=True, replace=None):
    """A POST through h2 with header edits: `extra` appended, `replace` a function of the
    header list; the body a small multipart unless given, its content-length unless `length`
    says another (or None: no content-length)."""
    body = upload(conn) if body is None else body
    headers = request_headers(options, length=len(body) if length is True else length, extra=extra)
    if replace:
        headers = replace(headers)
    conn.request(stream, headers, body)  # False when the server reset the stream first: its answer
    conn.wait_stream(stream)
    return stream


def upload(conn, content=FILE):
    """The multipart body of a request meant to be served (`multipart(content)`); `content` is
    recorded so the report can say what the upstream should get."""
    conn.file = content
    return multipart(content)


def server_settings(conn):
    """Waits for the server's SETTINGS (its limits); empty when none came."""
    conn.wait(lambda c: bool(c.server_settings))
    return conn.server_settings


def blast(conn, chunks, limit_seconds, stop=lambda conn: conn.closed_at is not None or conn.goaway is not None):
    """Sends a stream of byte chunks while reading the server's answers, until `stop(conn)`
    (by default: the server closed or sent GOAWAY), the chunks end or the time is up.
    Returns the bytes sent."""
    sent, deadline = 0, time.monotonic() + limit_seconds
    conn.sock.setblocking(False)
    try:
        for chunk in chunks:
            view = memoryview(chunk)
            while view:
                if stop(conn) or conn.closed_at or time.monotonic() > deadline:
                    return sent
                _, writable, _ = select.select([], [conn.sock], [], 0.5)
                conn.pump(0)
                if not writable:
                    continue
                try:
                    count = conn.sock.send(view[:65536])
                except (BlockingIOError, ssl.SSLWantWriteError, ssl.SSLWantReadError):
                    continue
                except OSError:
                    conn._closed()
                    return sent
                view, sent = view[count:], sent + count
        return sent
    finally:
        conn.sock.settimeout(conn.options.deadline)


# --- what the RFC requires, judged from the record
def judged_served(conn, stream):
    status = conn.status.get(stream)
    return status is not None and 200 <= status < 400


def stream_error(*codes):
    """A stream error (RST_STREAM with one of `codes`); a 4xx answer is what §8.1.1 allows for a
    malformed request; a GOAWAY with the code is a connection error where a stream error does."""
    def judge(conn, stream):
        if judged_served(conn, stream):
            return "fail", f"served: status {conn.status[stream]}"
        if conn.rst.get(stream) in codes:
            return "pass", f"RST_STREAM {conn.rst[stream]}"
        status = conn.status.get(stream)
        if status is not None and 400 <= status < 500:
            return "pass", f"answered {status} (§8.1.1: a response before closing the stream)"
        if conn.goaway and conn.goaway["error"] in codes:
            return "deviates", f"GOAWAY {conn.goaway['error']}: a connection error where the RFC asks a stream error"
        return refused_otherwise(conn, stream, "RST_STREAM " + "/".join(codes))
    return judge


def stream_or_connection_error(*codes):
    """A stream error or a connection error with one of `codes`: the RFC leaves the choice."""
    as_stream = stream_error(*codes)
    def judge(conn, stream):
        if conn.goaway and conn.goaway["error"] in codes and not judged_served(conn, stream):
            return "pass", f"GOAWAY {conn.goaway['error']}"
        return as_stream(conn, stream)
    return judge


def connection_error(*codes):
    """A connection error: GOAWAY with one of `codes` (the first one the RFC names), then close."""
    def judge(conn, stream):
        if stream and judged_served(conn, stream):
            return "fail", f"served: status {conn.status[stream]}"
        closing = f", closed at {conn.closed_at} s" if conn.closed_at else ", connection left open"
        if conn.goaway and conn.goaway["error"] in codes:
            return "pass", f"GOAWAY {conn.goaway['error']}{closing}"
        return refused_otherwise(conn, stream, "GOAWAY " + "/".join(codes))
    return judge


def refused_otherwise(conn, stream, wanted):
    """The verdict when the server's refusal is not the one the RFC names."""
    if conn.goaway and conn.goaway["error"] == "NO_ERROR":
        return "fail", f"ignored: only a graceful GOAWAY NO_ERROR at {conn.goaway['t']} s (the RFC asks {wanted})"
    if conn.goaway:
        return "deviates", f"GOAWAY {conn.goaway['error']}, the RFC asks {wanted}"
    if stream in conn.rst:
        return "deviates", f"RST_STREAM {conn.rst[stream]}, the RFC asks {wanted}"
    if conn.closed_at:
        return "deviates", f"closed at {conn.closed_at} s without GOAWAY, the RFC asks {wanted}"
    return "fail", f"no reaction (the RFC asks {wanted})"


def served(conn, stream):
    """Normal service: a 2xx response to the end of the stream."""
    status = conn.status.get(stream)
    if status is not None and 200 <= status < 300 and stream in conn.ended:
        return "pass", f"status {status}"
    return "fail", f"status {status}, RST {conn.rst.get(stream)}, GOAWAY {conn.goaway and conn.goaway['error']}"


def calmed(conn, stream):
    """A flood (§10.5): the server must end it before it is over, with GOAWAY ENHANCE_YOUR_CALM.
    A server that takes the whole flood has no limit, however well it serves afterwards."""
    flood = conn.flood or dict(unit="frame", count=0, accepted=0)
    took = f"{flood['accepted']} of {flood['count']} {flood['unit']}s taken"
    stopped = flood["accepted"] < flood["count"]
    if stopped and conn.goaway and conn.goaway["error"] == "ENHANCE_YOUR_CALM":
        return "pass", f"GOAWAY ENHANCE_YOUR_CALM at {conn.goaway['t']} s, {took}"
    if stopped and ((conn.goaway and conn.goaway["error"] != "NO_ERROR") or conn.closed_at):
        what = f"GOAWAY {conn.goaway['error']}" if conn.goaway else "closed without GOAWAY"
        return "deviates", f"{what}, not ENHANCE_YOUR_CALM, {took}"
    served = ""
    if stream in conn.ended and 200 <= (conn.status.get(stream) or 0) < 300:
        served = f"; the next request was answered {conn.status[stream]} in {conn.served_after} s"
    return "fail", f"no limit: {took}{served}"


def times_out(conn, stream):
    """The server ends what a client keeps open: the connection closes or the stream is reset."""
    if conn.not_applicable:
        return "n/a", conn.not_applicable
    if conn.closed_at or conn.goaway or stream in conn.rst:
        what = (f"GOAWAY {conn.goaway['error']} at {conn.goaway['t']} s" if conn.goaway else
                f"RST_STREAM {conn.rst[stream]} at {next(f['t'] for f in conn.frames if f['type'] == 'RST_STREAM')} s"
                if stream in conn.rst else "closed")
        return "pass", what + (f", closed at {conn.closed_at} s" if conn.closed_at else "")
    return "fail", f"still open after {conn.elapsed()} s"


def closed_or_http1(conn, stream):
    """HTTP/1.1 bytes on an h2c port: an HTTP/1.1 answer (the port speaks both) or a close."""
    if conn.other_bytes.startswith(b"HTTP/1."):
        return "pass", "answered in HTTP/1.1: " + conn.other_bytes.split(b"\r\n", 1)[0].decode("latin-1")
    if conn.goaway or conn.closed_at:
        return "pass", (f"GOAWAY {conn.goaway['error']}" if conn.goaway else "closed") + f" at {conn.closed_at} s"
    return "fail", "no answer and no close"


def not_applicable_or(judge):
    """`judge`, unless the case found that the server makes it impossible to run."""
    def wrapped(conn, stream):
        if conn.not_applicable:
            return "n/a", conn.not_applicable
        return judge(conn, stream)
    return wrapped


# --- the cases
CASES = {}


def case(name, rfc, judge, plain_only=False):
    """Registers a case: `run(options)` returns (connection, stream the verdict is about)."""
    def register(run):
        CASES[name] = dict(run=run, rfc=rfc, judge=judge, plain_only=plain_only, doc=(run.__doc__ or "").strip())
        return run
    return register


def malformed(name, rfc, edit, codes=("PROTOCOL_ERROR",)):
    """A case whose request headers are made malformed by `edit` (a function of the header list)."""
    def run(options):
        conn = Connection(options)
        return conn, post(conn, options, replace=edit)
    run.__doc__ = rfc
    case(name, rfc, stream_error(*codes))(run)


def without(name):
    return lambda headers: [(k, v) for k, v in headers if k != name]


def replacing(name, value):
    return lambda headers: [(k, value if k == name else v) for k, v in headers]


def adding(*fields, first=False):
    return lambda headers: (list(fields) + headers) if first else headers + list(fields)


# controls: what a correct client gets
@case("control_get", "a plain GET is served", served)
def control_get(options):
    conn = Connection(options)
    conn.request(1, request_headers(options, method="GET"))
    conn.wait_stream(1)
    return conn, 1


@case("control_post_empty_file", "a POST with a 0-byte file part is served", served)
def control_post_empty_file(options):
    conn = Connection(options)
    return conn, post(conn, options, body=upload(conn, b""))


@case("control_post_1mib", "a 1 MiB file POST, within the server's windows, is served", served)
def control_post_1mib(options):
    conn = Connection(options)
    return conn, post(conn, options, body=upload(conn, bytes(range(256)) * 4096))


@case("control_te_trailers", "§8.2.2: te: trailers is the one te value allowed", served)
def control_te_trailers(options):
    conn = Connection(options)
    return conn, post(conn, options, extra=[("te", "trailers")])


@case("control_trailers", "§8.1: a trailer section without pseudo-headers is allowed", served)
def control_trailers(options):
    conn = Connection(options)
    body = upload(conn)
    conn.request(1, request_headers(options, length=len(body)), body, end=False)
    conn.h2.send_headers(1, [("x-checksum", "none")], end_stream=True)
    conn.flush()
    conn.wait_stream(1)
    return conn, 1


@case("unknown_frame_type", "§4.1, §5.5: frames of unknown type are ignored", served)
def unknown_frame_type(options):
    conn = Connection(options)
    body = upload(conn)
    conn.send(frame(0xFA, 0xFF, 0, b"ignore me"))
    conn.request(1, request_headers(options, length=len(body)), body, end=False)
    conn.send(frame(0xFB, 0, 1, b"and me"))
    conn.h2.end_stream(1)
    conn.flush()
    conn.wait_stream(1)
    return conn, 1


# §8.3: pseudo-header fields; §8.2: field names and values. Malformed: stream error PROTOCOL_ERROR.
malformed("missing_path", "§8.3.1: :path is required", without(":path"))
malformed("missing_method", "§8.3.1: :method is required", without(":method"))
malformed("missing_scheme", "§8.3.1: :scheme is required", without(":scheme"))
malformed("empty_path", "§8.3.1: :path must not be empty", replacing(":path", ""))
malformed("duplicate_method", "§8.3: a pseudo-header appears once", adding((":method", "GET"), first=True))
malformed("duplicate_path", "§8.3: a pseudo-header appears once", adding((":path", "/other"), first=True))
malformed("pseudo_after_regular", "§8.3: pseudo-headers come before regular fields",
          lambda headers: [h for h in headers if h[0] != ":path"] + [(":path", options_path(headers))])
malformed("status_in_request", "§8.3.2: :status is a response pseudo-header", adding((":status", "200"), first=True))
malformed("unknown_pseudo", "§8.3: an undefined pseudo-header", adding((":foo", "bar"), first=True))
malformed("uppercase_header_name", "§8.2.1: field names are lowercase", adding(("X-Upper", "1")))
malformed("header_name_with_space", "§8.2.1: a field name with a space", adding(("x bad", "1")))
malformed("header_value_with_newline", "§8.2.1: CR/LF in a field value", adding(("x-split", "a\r\nx-injected: 1")))
malformed("connection_header", "§8.2.2: connection-specific field connection", adding(("connection", "keep-alive")))
malformed("keep_alive_header", "§8.2.2: connection-specific field keep-alive", adding(("keep-alive", "timeout=5")))
malformed("proxy_connection_header", "§8.2.2: connection-specific field proxy-connection",
          adding(("proxy-connection", "keep-alive")))
malformed("transfer_encoding_header", "§8.2.2: connection-specific field transfer-encoding",
          adding(("transfer-encoding", "chunked")))
malformed("upgrade_header", "§8.2.2: connection-specific field upgrade", adding(("upgrade", "h2c")))
malformed("te_gzip", "§8.2.2: te other than trailers", adding(("te", "gzip")))
malformed("content_length_twice_differing", "§8.1.1: content-length values that disagree",
          adding(("content-length", "1")))


def options_path(headers):
    return next(v for k, v in headers if k == ":path")


@case("content_length_larger", "§8.1.1: content-length larger than the DATA received",
      stream_error("PROTOCOL_ERROR"))
def content_length_larger(options):
    conn = Connection(options)
    body = multipart()
    return conn, post(conn, options, body=body, length=len(body) + 100)


@case("content_length_smaller", "§8.1.1: content-length smaller than the DATA received",
      stream_error("PROTOCOL_ERROR"))
def content_length_smaller(options):
    conn = Connection(options)
    body = multipart()
    return conn, post(conn, options, body=body, length=len(body) - 10)


@case("trailers_with_pseudo", "§8.1: a trailer section must not hold pseudo-headers", stream_error("PROTOCOL_ERROR"))
def trailers_with_pseudo(options):
    conn = Connection(options)
    body = multipart()
    conn.request(1, request_headers(options, length=len(body)), body, end=False)
    conn.send(raw_headers(conn, 1, [(":path", "/trailer"), ("x-after", "1")]))
    conn.wait_stream(1)
    return conn, 1


# streams and frames (§5.1, §6)
@case("data_after_end_stream", "§5.1, §6.1: DATA on a half-closed (remote) or closed stream: STREAM_CLOSED",
      stream_error("STREAM_CLOSED"))
def data_after_end_stream(options):
    conn = Connection(options)
    body = upload(conn)
    conn.request(1, request_headers(options, length=len(body)), body)
    conn.send(frame(DATA, END_STREAM, 1, b"one more"))
    conn.wait(lambda c: 1 in c.rst or c.goaway is not None)
    return conn, 1


@case("data_on_stream_0", "§6.1: DATA on stream 0 is a connection error PROTOCOL_ERROR",
      connection_error("PROTOCOL_ERROR"))
def data_on_stream_0(options):
    conn = Connection(options)
    conn.send(frame(DATA, 0, 0, b"no stream"))
    conn.wait_close(options.deadline)
    return conn, None


@case("data_on_idle_stream", "§5.1: DATA on an idle stream is a connection error PROTOCOL_ERROR",
      connection_error("PROTOCOL_ERROR"))
def data_on_idle_stream(options):
    conn = Connection(options)
    conn.send(frame(DATA, 0, 3, b"never opened"))
    conn.wait_close(options.deadline)
    return conn, None


@case("headers_on_even_stream", "§5.1.1: a client opens odd streams only: connection error PROTOCOL_ERROR",
      connection_error("PROTOCOL_ERROR"))
def headers_on_even_stream(options):
    conn = Connection(options)
    conn.send(raw_headers(conn, 2, request_headers(options, method="GET")))
    conn.wait_close(options.deadline)
    return conn, 2


@case("stream_id_reuse", "§5.1: HEADERS again on a closed stream: connection error STREAM_CLOSED",
      connection_error("STREAM_CLOSED", "PROTOCOL_ERROR"))
def stream_id_reuse(options):
    conn = Connection(options)
    conn.request(1, request_headers(options, method="GET"))
    conn.wait_stream(1)
    conn.status.pop(1, None)
    conn.ended.discard(1)
    conn.send(raw_headers(conn, 1, request_headers(options, method="GET")))
    conn.wait_close(options.deadline)
    return conn, 1


@case("stream_id_backwards", "§5.1.1: a stream id lower than one already opened: connection error PROTOCOL_ERROR",
      connection_error("PROTOCOL_ERROR"))
def stream_id_backwards(options):
    conn = Connection(options)
    conn.send(raw_headers(conn, 5, request_headers(options, method="GET")))
    conn.send(raw_headers(conn, 3, request_headers(options, method="GET")))
    conn.wait_close(options.deadline)
    return conn, 3


@case("stream_id_exhaustion", "§5.1.1: the last stream ids (2^31-3 and 2^31-1) are served; a HEADERS after them "
      "whose id wrapped (2^31+1: the reserved bit set, read as 1) is a connection error PROTOCOL_ERROR",
      lambda conn, stream: exhaustion_verdict(conn, stream))
def stream_id_exhaustion(options):
    """A client that has used every stream id: GETs on 2147483645 and 2147483647, each answered
    before the next goes, then a GET whose id went past 2^31-1 (the frame's 32 bits read
    0x80000001; a receiver ignores the reserved bit, RFC 9113 §4.1, so it is stream 1)."""
    conn = Connection(options)
    server_settings(conn)
    for stream in LAST_STREAMS:
        raw_get(conn, stream, options)
        conn.wait_stream(stream)
    conn.send(raw_headers(conn, 2**31 + 1, request_headers(options, method="GET")))
    conn.wait_close(options.deadline)
    return conn, 1


LAST_STREAMS = (2**31 - 3, 2**31 - 1)


def exhaustion_verdict(conn, stream):
    unserved = [last for last in LAST_STREAMS if not (last in conn.ended and judged_served(conn, last))]
    if unserved:
        return "fail", f"streams {unserved} were not served: status {[conn.status.get(s) for s in unserved]}"
    return connection_error("PROTOCOL_ERROR")(conn, stream)


@case("rst_stream_on_idle", "§6.4: RST_STREAM on an idle stream: connection error PROTOCOL_ERROR",
      connection_error("PROTOCOL_ERROR"))
def rst_stream_on_idle(options):
    conn = Connection(options)
    conn.send(frame(RST_STREAM, 0, 7, struct.pack(">I", CODE["CANCEL"])))
    conn.wait_close(options.deadline)
    return conn, None


@case("rst_stream_bad_length", "§6.4: RST_STREAM of 3 bytes: connection error FRAME_SIZE_ERROR",
      connection_error("FRAME_SIZE_ERROR"))
def rst_stream_bad_length(options):
    conn = Connection(options)
    conn.request(1, request_headers(options), end=False)
    conn.send(frame(RST_STREAM, 0, 1, b"\x00\x00\x08"))
    conn.wait_close(options.deadline)
    return conn, None


@case("continuation_without_headers", "§6.10: CONTINUATION without a HEADERS before it: PROTOCOL_ERROR",
      connection_error("PROTOCOL_ERROR"))
def continuation_without_headers(options):
    conn = Connection(options)
    conn.send(frame(CONTINUATION, END_HEADERS, 1, conn.headers_block(request_headers(options, method="GET"))))
    conn.wait_close(options.deadline)
    return conn, 1


@case("headers_interrupted", "§6.10: another frame inside a header block: connection error PROTOCOL_ERROR",
      connection_error("PROTOCOL_ERROR"))
def headers_interrupted(options):
    conn = Connection(options)
    conn.send(frame(HEADERS, END_STREAM, 1, conn.headers_block(request_headers(options, method="GET"))) +
              frame(PING, 0, 0, b"between!"))
    conn.wait_close(options.deadline)
    return conn, 1


@case("hpack_garbage", "§4.3: a header block that does not decode: connection error COMPRESSION_ERROR",
      connection_error("COMPRESSION_ERROR"))
def hpack_garbage(options):
    conn = Connection(options)
    conn.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, b"\xff\xff\xff\xff\xff\xff\xff\x7f"))
    conn.wait_close(options.deadline)
    return conn, 1


@case("push_promise_from_client", "§8.4: a client cannot push: connection error PROTOCOL_ERROR",
      connection_error("PROTOCOL_ERROR"))
def push_promise_from_client(options):
    conn = Connection(options)
    conn.request(1, request_headers(options), end=False)
    promised = struct.pack(">I", 2) + conn.headers_block(request_headers(options, method="GET"))
    conn.send(frame(PUSH_PROMISE, END_HEADERS, 1, promised))
    conn.wait_close(options.deadline)
    return conn, 1


@case("priority_on_itself", "§5.3.1 (RFC 7540), kept by RFC 9113 §5.3.2: a stream depending on itself: "
      "stream error PROTOCOL_ERROR", stream_error("PROTOCOL_ERROR"))
def priority_on_itself(options):
    conn = Connection(options)
    conn.request(1, request_headers(options), end=False)
    conn.send(frame(PRIORITY, 0, 1, struct.pack(">IB", 1, 15)))
    conn.wait(lambda c: 1 in c.rst or c.goaway is not None)
    return conn, 1


@case("priority_headers_on_itself", "§5.3.1 (RFC 7540), kept by RFC 9113 §5.3.2: HEADERS whose priority "
      "names the stream itself: stream error PROTOCOL_ERROR", stream_error("PROTOCOL_ERROR"))
def priority_headers_on_itself(options):
    conn = Connection(options)
    block = conn.headers_block(request_headers(options, method="GET"))
    conn.send(frame(HEADERS, END_HEADERS | END_STREAM | PRIORITY_FLAG, 1, struct.pack(">IB", 1, 15) + block))
    conn.wait(lambda c: 1 in c.rst or 1 in c.status or c.goaway is not None)
    return conn, 1


@case("priority_bad_length", "§6.3: PRIORITY of 4 bytes: stream error FRAME_SIZE_ERROR",
      stream_error("FRAME_SIZE_ERROR"))
def priority_bad_length(options):
    conn = Connection(options)
    conn.request(1, request_headers(options), end=False)
    conn.send(frame(PRIORITY, 0, 1, b"\x00\x00\x00\x00"))
    conn.wait(lambda c: 1 in c.rst or c.goaway is not None)
    return conn, 1


@case("frame_larger_than_max", "§4.2: a DATA frame above SETTINGS_MAX_FRAME_SIZE: FRAME_SIZE_ERROR, a stream or a "
      "connection error", not_applicable_or(stream_or_connection_error("FRAME_SIZE_ERROR")))
def frame_larger_than_max(options):
    conn = Connection(options)
    limit = server_settings(conn).get(MAX_FRAME_SIZE, 16384)
    if limit >= 2**24 - 1:
        conn.not_applicable = f"the server allows frames of {limit} bytes, the most a frame header can say"
        return conn, 1
    body = multipart(b"x" * limit)
    conn.request(1, request_headers(options, length=len(body)), end=False)
    conn.send(frame(DATA, END_STREAM, 1, body))
    conn.wait(lambda c: 1 in c.rst or c.goaway is not None or 1 in c.ended)
    return conn, 1


# SETTINGS, PING, WINDOW_UPDATE (§6.5, §6.7, §6.9)
def bad_settings(name, rfc, payload, code, stream=0, flags=0):
    def run(options):
        conn = Connection(options)
        conn.send(frame(SETTINGS, flags, stream, payload))
        conn.wait_close(options.deadline)
        return conn, None
    case(name, rfc, connection_error(code))(run)


bad_settings("settings_enable_push_2", "§6.5.2: ENABLE_PUSH other than 0 or 1: PROTOCOL_ERROR",
             settings_payload((ENABLE_PUSH, 2)), "PROTOCOL_ERROR")
bad_settings("settings_initial_window_too_big", "§6.5.2: INITIAL_WINDOW_SIZE above 2^31-1: FLOW_CONTROL_ERROR",
             settings_payload((INITIAL_WINDOW_SIZE, 2**31)), "FLOW_CONTROL_ERROR")
bad_settings("settings_max_frame_too_small", "§6.5.2: MAX_FRAME_SIZE below 16384: PROTOCOL_ERROR",
             settings_payload((MAX_FRAME_SIZE, 16383)), "PROTOCOL_ERROR")
bad_settings("settings_max_frame_too_big", "§6.5.2: MAX_FRAME_SIZE above 2^24-1: PROTOCOL_ERROR",
             settings_payload((MAX_FRAME_SIZE, 2**24)), "PROTOCOL_ERROR")
bad_settings("settings_on_a_stream", "§6.5: SETTINGS on a stream: PROTOCOL_ERROR",
             settings_payload((MAX_CONCURRENT_STREAMS, 10)), "PROTOCOL_ERROR", stream=1)
bad_settings("settings_bad_length", "§6.5: a SETTINGS payload not a multiple of 6: FRAME_SIZE_ERROR",
             b"\x00\x03\x00\x00\x00\x0a\x00", "FRAME_SIZE_ERROR")
bad_settings("settings_ack_with_payload", "§6.5: a SETTINGS ACK with a payload: FRAME_SIZE_ERROR",
             settings_payload((MAX_CONCURRENT_STREAMS, 10)), "FRAME_SIZE_ERROR", flags=ACK)


def lockstep(conn, unit, count, batch=100):
    """Sends the frames `unit(0)` to `unit(count - 1)` in batches of `batch`, each batch followed
    by a PING whose ACK is awaited before the next one goes: when the server's GOAWAY comes, at
    most one batch went out past the frame that decided it. `conn.flood` records the count and
    the frames sent before a GOAWAY or a close was seen (`accepted`: at most `batch` more than
    the server took; all of them when it never objected)."""
    sent = 0
    for first in range(0, count, batch):
        if conn.goaway or conn.closed_at:
            break
        size = min(batch, count - first)
        marker = b"sync" + struct.pack(">I", first)
        if not conn.send(b"".join(unit(index) for index in range(first, first + size)) + frame(PING, 0, 0, marker)):
            break
        sent += size
        if not conn.wait(lambda c: marker in c.ping_acks or c.goaway is not None):
            break  # neither the ACK nor a GOAWAY within the deadline: the record says what came
    conn.flood = dict(unit="frame", count=count, sent=sent, accepted=sent)


def flood(name, rfc, unit, count=10000):
    """A GET (the baseline), then `count` frames sent in lock step (`lockstep`), then a GET again
    (on a connection the server kept). `unit(conn, options)` gives a function of the frame's
    index that returns the frame, and the stream id for the second GET."""
    def run(options):
        conn = Connection(options)
        server_settings(conn)
        still_served(conn, options, 1)
        conn.served_before = conn.served_after
        copy, stream = unit(conn, options)
        lockstep(conn, copy, count)
        still_served(conn, options, stream)
        return conn, stream
    run.__doc__ = rfc
    case(name, rfc, calmed)(run)


def open_upload(conn, options):
    """Stream 3 opened as a POST whose body has not started: empty DATA frames on it."""
    conn.send(raw_headers(conn, 3, request_headers(options), end_stream=False))
    return (lambda index: frame(DATA, 0, 3)), 5


def constant(unit):
    """The same frame at every index."""
    return lambda conn, options: ((lambda index: unit), 3)


flood("settings_flood", "§10.5: 10,000 SETTINGS frames: GOAWAY ENHANCE_YOUR_CALM before the last",
      constant(frame(SETTINGS, 0, 0, settings_payload((HEADER_TABLE_SIZE, 4096)))))
flood("ping_flood", "§10.5: 10,000 PINGs: GOAWAY ENHANCE_YOUR_CALM before the last",
      constant(frame(PING, 0, 0, b"flooding")))
flood("window_update_flood", "§10.5: 10,000 WINDOW_UPDATEs of 1: GOAWAY ENHANCE_YOUR_CALM before the last",
      constant(frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", 1))))
flood("empty_data_flood", "§10.5: 10,000 empty DATA frames on an open stream: GOAWAY ENHANCE_YOUR_CALM before "
      "the last", open_upload)
flood("priority_flood", "§10.5, §5.3.2: 10,000 PRIORITY frames, each on another idle stream (5, 7, ...): GOAWAY "
      "ENHANCE_YOUR_CALM before the last",
      lambda conn, options: ((lambda index: frame(PRIORITY, 0, 5 + 2 * index, struct.pack(">IB", 0, 15))), 3))


@case("ping_bad_length", "§6.7: a PING of 7 bytes: connection error FRAME_SIZE_ERROR",
      connection_error("FRAME_SIZE_ERROR"))
def ping_bad_length(options):
    conn = Connection(options)
    conn.send(frame(PING, 0, 0, b"7 bytes"))
    conn.wait_close(options.deadline)
    return conn, None


@case("ping_on_a_stream", "§6.7: PING on a stream: connection error PROTOCOL_ERROR", connection_error("PROTOCOL_ERROR"))
def ping_on_a_stream(options):
    conn = Connection(options)
    conn.request(1, request_headers(options), end=False)
    conn.send(frame(PING, 0, 1, b"onstream"))
    conn.wait_close(options.deadline)
    return conn, None


@case("window_update_overflow_connection", "§6.9.1: a connection window above 2^31-1: FLOW_CONTROL_ERROR",
      connection_error("FLOW_CONTROL_ERROR"))
def window_update_overflow_connection(options):
    conn = Connection(options)
    conn.send(frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", MAX_WINDOW)))
    conn.wait_close(options.deadline)
    return conn, None


@case("window_update_overflow_stream", "§6.9.1: a stream window above 2^31-1: stream error FLOW_CONTROL_ERROR",
      stream_error("FLOW_CONTROL_ERROR"))
def window_update_overflow_stream(options):
    conn = Connection(options)
    conn.request(1, request_headers(options), end=False)
    conn.send(frame(WINDOW_UPDATE, 0, 1, struct.pack(">I", MAX_WINDOW)))
    conn.wait(lambda c: 1 in c.rst or c.goaway is not None)
    return conn, 1


@case("window_update_zero_connection", "§6.9: a connection WINDOW_UPDATE of 0: connection error PROTOCOL_ERROR",
      connection_error("PROTOCOL_ERROR"))
def window_update_zero_connection(options):
    conn = Connection(options)
    conn.send(frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", 0)))
    conn.wait_close(options.deadline)
    return conn, None


@case("window_update_zero_stream", "§6.9: a stream WINDOW_UPDATE of 0: stream error PROTOCOL_ERROR",
      stream_error("PROTOCOL_ERROR"))
def window_update_zero_stream(options):
    conn = Connection(options)
    conn.request(1, request_headers(options), end=False)
    conn.send(frame(WINDOW_UPDATE, 0, 1, struct.pack(">I", 0)))
    conn.wait(lambda c: 1 in c.rst or c.goaway is not None)
    return conn, 1


# resource abuse (§10.5) and timeouts
@case("rapid_reset", "CVE-2023-44487: 1,000 streams opened and reset at once: GOAWAY ENHANCE_YOUR_CALM before "
      "the last", calmed)
def rapid_reset(options):
    """A GET first (the time it takes is the baseline), then streams 3 to 2001 opened and reset
    back to back, then a GET on stream 2003. The streams the server took are those up to its
    GOAWAY's last stream id."""
    conn = Connection(options)
    server_settings(conn)
    still_served(conn, options, 1)
    conn.served_before = conn.served_after
    get = request_headers(options, method="GET")
    streams = range(3, 2003, 2)
    pairs = [raw_headers(conn, stream, get) + frame(RST_STREAM, 0, stream, struct.pack(">I", CODE["CANCEL"]))
             for stream in streams]
    sent = frames_sent(pairs, blast(conn, pairs, options.deadline))
    conn.wait(lambda c: c.goaway is not None)
    taken = [stream for stream in streams[:sent] if not conn.goaway or stream <= conn.goaway["last_stream"]]
    conn.flood = dict(unit="stream", count=len(streams), sent=sent, accepted=len(taken))
    still_served(conn, options, 2003)
    return conn, 2003


def frames_sent(pieces, count):
    """How many of `pieces` (byte strings sent in order) `count` bytes began."""
    began, total = 0, 0
    for piece in pieces:
        if total >= count:
            break
        began, total = began + 1, total + len(piece)
    return began


def continuation_frames(conn, options, frames):
    """A HEADERS without END_HEADERS, then `frames` CONTINUATIONs of 16 KiB of valid HPACK
    (literal fields never indexed), never ending the block."""
    pieces = [frame(HEADERS, END_STREAM, 1, conn.headers_block(request_headers(options, method="GET")))]
    field = b"\x10\x07x-flood" + bytes([0x7F, 0x7F]) + b"a" * 254  # name "x-flood", 254-byte value
    return pieces + [frame(CONTINUATION, 0, 1, field * (16384 // len(field)))] * frames


@case("continuation_flood", "CVE-2024-27316 class: a header block of 4,096 CONTINUATION frames (64 MiB) that never "
      "ends: GOAWAY ENHANCE_YOUR_CALM before the last (a refusal of the stream alone leaves the connection reading)",
      calmed)
def continuation_flood(options):
    """Sent as fast as the socket takes it (nothing else may come inside a header block, so no
    lock step), from a send buffer of 64 KiB: the frames counted as taken are those begun
    before the GOAWAY or the close was seen, which includes what the socket buffers held."""
    conn = Connection(options)
    conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 65536)
    server_settings(conn)
    pieces = continuation_frames(conn, options, 4096)
    sent = frames_sent(pieces, blast(conn, pieces, options.deadline * 3))
    conn.wait_close(options.deadline)
    conn.flood = dict(unit="frame", count=len(pieces), sent=sent, accepted=sent)
    return conn, 1


@case("oversized_header_block", "§10.5.1: a 256 KiB header block in HEADERS + CONTINUATION: 431, or "
      "RST_STREAM REFUSED_STREAM / PROTOCOL_ERROR", lambda conn, stream: oversized_verdict(conn, stream))
def oversized_header_block(options):
    conn = Connection(options)
    limit = server_settings(conn).get(MAX_FRAME_SIZE, 16384)
    extra = [(f"x-big-{index}", "b" * 4000) for index in range(64)]
    block = conn.headers_block(request_headers(options, method="GET", extra=extra))
    size = min(limit, 16384)
    pieces = [block[at:at + size] for at in range(0, len(block), size)]
    frames = [frame(HEADERS, END_STREAM | (END_HEADERS if len(pieces) == 1 else 0), 1, pieces[0])]
    frames += [frame(CONTINUATION, END_HEADERS if index == len(pieces) - 1 else 0, 1, piece)
               for index, piece in enumerate(pieces[1:], start=1)]
    blast(conn, frames, options.deadline)
    conn.wait_stream(1)
    return conn, 1


def oversized_verdict(conn, stream):
    status = conn.status.get(stream)
    if status == 431:
        return "pass", "status 431"
    if conn.rst.get(stream) in ("REFUSED_STREAM", "PROTOCOL_ERROR"):
        return "pass", f"RST_STREAM {conn.rst[stream]}"
    if status is not None and 200 <= status < 400:
        return "fail", f"served: status {status}"
    if status is not None:
        return "deviates", f"status {status}, the RFC's field-size refusal is 431"
    return refused_otherwise(conn, stream, "431 or RST_STREAM REFUSED_STREAM/PROTOCOL_ERROR")


@case("hpack_amplification", "§10.5.1, RFC 7541 §7.3: a 4 KiB dynamic-table entry referenced 16,000 times in a "
      "header block of 20 KiB (a 64 MiB header list): 431, RST_STREAM or GOAWAY, within bounded memory",
      lambda conn, stream: oversized_verdict(conn, stream))
def hpack_amplification(options):
    """h2's encoder adds the 4 KiB field to its dynamic table at its first occurrence and sends
    every later one as a one-byte index (the table of 4,096 bytes holds it alone), so its
    context stays the server's: a GET on stream 3 afterwards shows whether the connection
    goes on."""
    conn = Connection(options)
    limit = min(server_settings(conn).get(MAX_FRAME_SIZE, 16384), 16384)
    big = ("x-amplified", "a" * 4000)
    block = conn.headers_block(request_headers(options, method="GET") + [big] * 16000)
    pieces = [block[at:at + limit] for at in range(0, len(block), limit)]
    frames = [frame(HEADERS, END_STREAM | (END_HEADERS if len(pieces) == 1 else 0), 1, pieces[0])]
    frames += [frame(CONTINUATION, END_HEADERS if index == len(pieces) - 1 else 0, 1, piece)
               for index, piece in enumerate(pieces[1:], start=1)]
    blast(conn, frames, options.deadline)
    conn.wait_stream(1)
    still_served(conn, options, 3)
    return conn, 1


@case("too_many_streams", "§5.1.2: a stream beyond SETTINGS_MAX_CONCURRENT_STREAMS: stream error "
      "REFUSED_STREAM or PROTOCOL_ERROR", not_applicable_or(stream_error("REFUSED_STREAM", "PROTOCOL_ERROR")))
def too_many_streams(options):
    conn = Connection(options)
    limit = server_settings(conn).get(MAX_CONCURRENT_STREAMS)
    if limit is None or limit > 1000:
        conn.not_applicable = f"the server's MAX_CONCURRENT_STREAMS is {limit}: too many to open here"
        return conn, 1
    streams = [1 + 2 * index for index in range(limit + 1)]
    upload = request_headers(options, length=len(multipart()))
    blast(conn, [b"".join(raw_headers(conn, stream, upload, end_stream=False) for stream in streams)],
          options.deadline)
    last = streams[-1]
    conn.wait(lambda c: last in c.rst or last in c.status or c.goaway is not None)
    return conn, last


@case("zero_window_stall", "§10.5: a client whose stream window stays 0 never reads the response: the "
      "server must time it out (the time to close is reported)", times_out)
def zero_window_stall(options):
    conn = Connection(options, settings={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 0}, auto_window=False)
    conn.request(1, request_headers(options, method="GET"))
    conn.wait(lambda c: 1 in c.status or 1 in c.rst or c.goaway is not None)
    if 1 in conn.ended and not conn.rst:
        conn.not_applicable = "the response had no body: nothing for the window to hold back"
        return conn, 1
    conn.wait(lambda c: c.closed_at is not None or 1 in c.rst or c.goaway is not None, options.slow_deadline)
    return conn, 1


@case("idle_connection", "§9.1: an idle connection is closed by the server (GOAWAY, then close)", times_out)
def idle_connection(options):
    conn = Connection(options)
    server_settings(conn)
    conn.wait_close(options.slow_deadline)
    return conn, None


@case("bad_preface", "§3.4: a wrong connection preface: connection error PROTOCOL_ERROR (GOAWAY may be omitted)",
      lambda conn, stream: ("pass", (f"GOAWAY {conn.goaway['error']}, " if conn.goaway else "") +
                            f"closed at {conn.closed_at} s") if conn.closed_at or conn.goaway else
      ("fail", "the connection stayed open"))
def bad_preface(options):
    conn = Connection(options, handshake=False)
    conn.send(b"PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n" + frame(SETTINGS, 0, 0))
    conn.wait_close(options.deadline)
    return conn, None


@case("http1_on_h2c_port", "§3.4: HTTP/1.1 bytes where a prior-knowledge client would send the preface: an "
      "HTTP/1.1 answer (a port that speaks both) or a close", closed_or_http1, plain_only=True)
def http1_on_h2c_port(options):
    conn = Connection(options, handshake=False)
    body = upload(conn)
    conn.send(f"POST {options.path} HTTP/1.1\r\nHost: {options.host}\r\nContent-Type: {CONTENT_TYPE}\r\n"
              f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
    conn.wait(lambda c: c.closed_at is not None or b"\r\n\r\n" in c.other_bytes)
    return conn, None


def h2c_upgrade(options, port):
    """An HTTP/1.1 multipart POST that asks to switch to h2c (RFC 7540 §3.2, removed by RFC 9113
    §3.1): `Connection: Upgrade, HTTP2-Settings`, `Upgrade: h2c`, an `HTTP2-Settings` field."""
    target = argparse.Namespace(**vars(options))
    target.port = port
    conn = Connection(target, handshake=False)
    body = upload(conn)
    settings = base64.urlsafe_b64encode(settings_payload((MAX_CONCURRENT_STREAMS, 100),
                                                         (INITIAL_WINDOW_SIZE, 65535))).rstrip(b"=").decode()
    conn.send(f"POST {options.path} HTTP/1.1\r\nHost: {options.host}\r\nConnection: Upgrade, HTTP2-Settings\r\n"
              f"Upgrade: h2c\r\nHTTP2-Settings: {settings}\r\nContent-Type: {CONTENT_TYPE}\r\n"
              f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
    conn.wait(lambda c: c.closed_at is not None or http1_answered(c.other_bytes))
    return conn, None


def http1_answered(data):
    """Whether `data` holds an HTTP/1.1 response head and its Content-Length body (or a 101)."""
    head, separator, body = data.partition(b"\r\n\r\n")
    if not separator:
        return False
    length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
    return b" 101 " in head.split(b"\r\n", 1)[0] or len(body) >= (int(length.group(1)) if length else 0)


def not_switched(conn, stream):
    """A gateway with rules must not switch an upload to h2c: the request is served as HTTP/1.1
    (the rules applied, the Upgrade fields not forwarded: the upstream's record says) or refused."""
    if conn.not_applicable:
        return "n/a", conn.not_applicable
    line = conn.other_bytes.split(b"\r\n", 1)[0].decode("latin-1")
    if line.startswith("HTTP/1.1 101"):
        return "fail", f"switched protocols: {line}"
    if line.startswith("HTTP/1."):
        return "pass", f"answered in HTTP/1.1 without switching: {line}"
    return "fail", "no HTTP/1.1 answer" + (f" (closed at {conn.closed_at} s)" if conn.closed_at else "")


@case("h2c_upgrade_on_http1_listener", "RFC 9113 §3.1 (h2c Upgrade removed): a multipart POST asking to upgrade "
      "to h2c on a listener without HTTP/2: served as HTTP/1.1 (or refused), never switched", not_switched,
      plain_only=True)
def h2c_upgrade_on_http1_listener(options):
    if not options.http1_port:
        conn = Connection(options, handshake=False)
        conn.not_applicable = "no --http1-port: the server's HTTP/1.1-only port is not known"
        return conn, None
    return h2c_upgrade(options, options.http1_port)


@case("h2c_upgrade_on_h2c_listener", "RFC 9113 §3.1 (h2c Upgrade removed): the same POST on the port that speaks "
      "h2c with prior knowledge: served as HTTP/1.1 (or refused), never switched", not_switched, plain_only=True)
def h2c_upgrade_on_h2c_listener(options):
    return h2c_upgrade(options, options.port)


# --- running the cases
def run_case(name, options):
    """One case on its own connection: its record and verdict as a dict. With --tag the case's
    requests go to --path with `?case=NAME` (`&case=NAME` after a query), so what an upstream
    received can be told apart by case; with --pid the server's CPU time and peak memory are
    read before and after."""
    spec = CASES[name]
    result = dict(case=name, rfc=spec["rfc"])
    if spec["plain_only"] and options.tls:
        return dict(result, verdict="n/a", note="an h2c case: the port speaks TLS")
    if options.tag:
        options = argparse.Namespace(**vars(options))
        options.path += ("&" if "?" in options.path else "?") + f"case={name}"
    began, usage = time.monotonic(), server_usage(options.pid) if options.pid else None
    conn = None
    try:
        conn, stream = spec["run"](options)
        # A PING answered (or a GOAWAY instead) before the verdict: the server has acted on
        # every frame of the case, so a GOAWAY they provoke is in the record however the
        # bytes were split between reads.
        alive = conn.alive() if conn.handshake and not conn.closed_at and not conn.goaway else False
        verdict, note = spec["judge"](conn, stream)
        if conn.handshake and not conn.saw_settings:
            # §3.4: the server's preface is a SETTINGS frame. Without one it does not speak h2
            # here, and whatever it did is no verdict on the case.
            sent = conn.other_bytes[:60] or conn.buffer[:60]
            verdict, note = "fail", f"the server sent no SETTINGS: not HTTP/2 (it sent {sent!r}, then {note})"
        seconds = round(time.monotonic() - began, 3)
    except Exception as error:  # a client-side failure is reported, never taken for the server's answer
        return dict(result, verdict="error", note=f"{type(error).__name__}: {error}",
                    seconds=round(time.monotonic() - began, 3))
    finally:
        if conn:
            conn.close()
    if usage:
        after = server_usage(options.pid)
        result.update(cpu_seconds=round(after[0] - usage[0], 3), peak_rss_growth_kib=after[1] - usage[1])
    if conn.file is not None:
        result.update(file=dict(bytes=len(conn.file), sha256=hashlib.sha256(conn.file).hexdigest()))
    return dict(result, verdict=verdict, note=note, outcome=outcome(conn, stream), seconds=seconds, stream=stream,
                status=conn.status.get(stream) if stream else None, rst=conn.rst.get(stream) if stream else None,
                goaway=conn.goaway and {k: conn.goaway[k] for k in ("error", "last_stream", "debug", "t")},
                closed_at=conn.closed_at, connection_alive_after=alive, flood=conn.flood,
                frames_received=len(conn.frames), frames=kept_frames(conn.frames),
                response=conn.bodies.get(stream, b"")[:1000].decode("latin-1") if stream else None,
                http1=conn.other_bytes[:200].decode("latin-1") or None)


def outcome(conn, stream):
    """The server's answer without times, to pin: the stream's :status and RST_STREAM code, the
    GOAWAY code, an HTTP/1.1 status line; "closed" (or "open") when there was none of those."""
    facts = []
    if stream and stream in conn.status:
        facts.append(f"status {conn.status[stream]}")
    if stream and stream in conn.rst:
        facts.append(f"RST_STREAM {conn.rst[stream]}")
    if conn.goaway:
        facts.append(f"GOAWAY {conn.goaway['error']}")
    if conn.other_bytes.startswith(b"HTTP/1."):
        facts.append(" ".join(conn.other_bytes.split(b"\r\n", 1)[0].decode("latin-1").split(" ")[:2]))
    return ", ".join(facts) or ("closed" if conn.closed_at else "open")


def kept_frames(frames, head=30, tail=10):
    """The frames a report shows: all of them, or the first and the last of a flood's answers."""
    if len(frames) <= head + tail:
        return frames
    return frames[:head] + [dict(type=f"... {len(frames) - head - tail} more")] + frames[-tail:]


def server_usage(pid):
    """The server process's CPU seconds (user and system) and peak resident memory (KiB)."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # utime and stime, fields 14 and 15 of stat(5)
    peak = int(re.search(r"VmHWM:\s+(\d+)", open(f"/proc/{pid}/status").read()).group(1))
    return ticks / os.sysconf("SC_CLK_TCK"), peak


def server_footprint(pid):
    """The server process's open descriptors and resident memory (KiB), from /proc."""
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    rss = int(re.search(r"VmRSS:\s+(\d+)", open(f"/proc/{pid}/status").read()).group(1))
    return fds, rss


def settled_footprint(pid, baseline, seconds):
    """The footprint once the descriptors are back to `baseline` (the server closes the cases'
    connections on its own clock), or as it is when `seconds` have passed."""
    deadline = time.monotonic() + seconds
    while True:
        fds, rss = server_footprint(pid)
        if fds <= baseline or time.monotonic() > deadline:
            return fds, rss
        time.sleep(0.2)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("host")
    parser.add_argument("port", type=int)
    parser.add_argument("--tls", action="store_true", help="TLS with ALPN h2 (else prior-knowledge h2c)")
    parser.add_argument("--cafile", help="the CA that signed the server's certificate (with --tls)")
    parser.add_argument("--sni", help="the server name to send and to verify (with --tls; also :authority)")
    parser.add_argument("--path", default="/upload", help="where the POSTs go (default /upload)")
    parser.add_argument("--case", action="append", help="run only this case (repeatable)")
    parser.add_argument("--tag", action="store_true", help="send each case's requests to --path?case=NAME")
    parser.add_argument("--http1-port", type=int, help="the server's port that speaks HTTP/1.1 only (the h2c "
                        "Upgrade case; without it, n/a)")
    parser.add_argument("--json", action="store_true", help="one JSON object per case, and a summary")
    parser.add_argument("--list", action="store_true", help="list the cases and what RFC 9113 requires")
    parser.add_argument("--pid", type=int, help="the server's process: its descriptors and RSS before and after "
                        "the cases go into the summary, its CPU time and peak RSS growth over each case into "
                        "the case's line")
    parser.add_argument("--deadline", type=float, default=10.0, help="seconds before a hanging case is ended")
    parser.add_argument("--slow-deadline", type=float, default=90.0,
                        help="seconds the idle and zero-window cases wait for the server's timeout")
    options = parser.parse_args()
    if options.list:
        for name, spec in CASES.items():
            print(f"{name:36} {spec['rfc']}")
        return 0
    names = options.case or list(CASES)
    unknown = [name for name in names if name not in CASES]
    if unknown:
        parser.error(f"unknown cases: {', '.join(unknown)}")
    counts, before = {}, server_footprint(options.pid) if options.pid else None
    for name in names:
        result = run_case(name, options)
        counts[result["verdict"]] = counts.get(result["verdict"], 0) + 1
        if options.json:
            print(json.dumps(result), flush=True)
        else:
            print(f"{result['verdict']:9} {name:36} {result['note']}", flush=True)
    summary = dict(summary=True, cases=len(names), **counts)
    footprint = ""
    if before:
        after = settled_footprint(options.pid, before[0], options.slow_deadline)
        summary.update(fds_before=before[0], fds_after=after[0], rss_kib_before=before[1], rss_kib_after=after[1])
        footprint = f"; server fds {before[0]} -> {after[0]}, RSS {before[1]} -> {after[1]} KiB"
    print(json.dumps(summary) if options.json else
          "h2_hostile: " + ", ".join(f"{count} {verdict}" for verdict, count in sorted(counts.items())) + footprint,
          flush=True)
    return 1 if counts.get("fail") or counts.get("error") else 0


if __name__ == "__main__":
    sys.exit(main())
