#!/usr/bin/env python3
"""HTTP/2 amplification clients for FormGate's h2c listener (issue 26, item 5).

    h2_amplify.py HOST PORT --mode refs|ordinary [--blocks 50] [--refs 10000] [--value 4000]
                            [--list-bytes 32768] [--deadline S]
    h2_amplify.py HOST PORT --mode ackflood [--seconds 20] [--burst 200] [--pid PID]

refs      one connection, `--blocks` request header blocks, each holding `--refs` references
          to one dynamic-table entry of a `--value`-byte value (the entry is inserted by the
          first block): 10 KiB on the wire decode to 40 MB of header list.
ordinary  the same number of blocks, each holding literal fields (not indexed) that add up to
          just over `--list-bytes` (RFC 9113 §6.5.2 measure): the reference cost of decoding
          a header list as large as the limit.
ackflood  sends SETTINGS and PING frames in bursts without ever reading, until the server
          ends the connection (a send fails) or `--seconds` pass; with --pid, samples the
          server's VmRSS as it goes.

Headers modes read the answers and print one JSON object: the :status per stream, RST_STREAM
codes, the GOAWAY (code) and whether the connection closed. ackflood prints: frames and bytes
sent, how it ended (closed, the error), seconds, and with --pid the RSS at the start and its
maximum (KiB). Exit status 0 unless the client itself failed.
"""
import argparse
import json
import socket
import struct
import time

import hpack
import hyperframe.frame as hf

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY = 1, 3, 4, 6, 7
END_STREAM, ACK, END_HEADERS = 0x1, 0x1, 0x4


def frame(kind, flags, stream, payload=b""):
    """One frame: 9-byte header and payload."""
    return struct.pack(">I", len(payload))[1:] + struct.pack(">BBI", kind, flags, stream) + payload


def connect(options):
    sock = socket.create_connection((options.host, options.port), timeout=options.deadline)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.sendall(PREFACE + frame(SETTINGS, 0, 0))
    return sock


def pseudo(encoder, port):
    """The request's pseudo-header fields, encoded without indexing (the table holds only x-amp)."""
    fields = [(b":method", b"POST"), (b":scheme", b"http"), (b":path", b"/upload"),
              (b":authority", f"127.0.0.1:{port}".encode())]
    return b"".join(encoder.encode([field], huffman=False) for field in
                    [hpack.NeverIndexedHeaderTuple(name, value) for name, value in fields])


def refs_blocks(options):
    """Block 1 inserts x-amp into the dynamic table, then every block repeats its index."""
    encoder = hpack.Encoder()
    big = (b"x-amp", b"a" * options.value)
    insert = encoder.encode([big], huffman=False)
    reference = encoder.encode([big], huffman=False)
    assert len(reference) == 1, reference
    head = pseudo(encoder, options.port)
    return [head + (insert if index == 0 else b"") + reference * options.refs for index in range(options.blocks)]


def ordinary_blocks(options):
    """Literal fields of about 1,000 bytes, not indexed, until the list passes --list-bytes."""
    encoder = hpack.Encoder()
    head = pseudo(encoder, options.port)
    fields, size, number = [], 0, 0
    while size <= options.list_bytes:
        name, value = f"x-field-{number}".encode(), b"v" * 960
        fields.append(hpack.NeverIndexedHeaderTuple(name, value))
        size, number = size + len(name) + len(value) + 32, number + 1
    block = head + encoder.encode(fields, huffman=False)
    return [block] * options.blocks


def send_blocks(sock, blocks):
    """Each block as one HEADERS frame (CONTINUATIONs past 16 KiB) with END_STREAM."""
    for index, block in enumerate(blocks):
        stream = 2 * index + 1
        chunks = [block[at:at + 16384] for at in range(0, len(block), 16384)]
        data = b""
        for number, chunk in enumerate(chunks):
            last = END_HEADERS if number == len(chunks) - 1 else 0
            kind = HEADERS if number == 0 else 9
            data += frame(kind, last | (END_STREAM if number == 0 else 0), stream, chunk)
        sock.sendall(data)


def read_answers(sock, options, streams):
    """Reads until every stream ended or was reset, a GOAWAY came, the connection closed or the
    deadline passed; SETTINGS are acknowledged."""
    decoder, buffer, block = hpack.Decoder(), b"", b""
    record = dict(status={}, rst={}, goaway=None, closed=False, ended=[])
    deadline = time.monotonic() + options.deadline
    pending = set(streams)
    while pending and record["goaway"] is None and time.monotonic() < deadline:
        try:
            data = sock.recv(65536)
        except socket.timeout:
            break
        if not data:
            record["closed"] = True
            break
        buffer += data
        while len(buffer) >= 9 and len(buffer) >= 9 + int.from_bytes(buffer[:3], "big"):
            length = int.from_bytes(buffer[:3], "big")
            parsed, _ = hf.Frame.parse_frame_header(memoryview(buffer[:9]))
            parsed.parse_body(memoryview(buffer[9:9 + length]))
            buffer = buffer[9 + length:]
            if isinstance(parsed, (hf.HeadersFrame, hf.ContinuationFrame)):
                block += parsed.data
                if "END_HEADERS" in parsed.flags:
                    fields = dict(decoder.decode(block, raw=True))
                    block = b""
                    if b":status" in fields:
                        record["status"][str(parsed.stream_id)] = int(fields[b":status"])
            elif isinstance(parsed, hf.RstStreamFrame):
                record["rst"][str(parsed.stream_id)] = parsed.error_code
                pending.discard(parsed.stream_id)
            elif isinstance(parsed, hf.GoAwayFrame):
                record["goaway"] = parsed.error_code
            elif isinstance(parsed, hf.SettingsFrame) and "ACK" not in parsed.flags:
                sock.sendall(frame(SETTINGS, ACK, 0))
            if "END_STREAM" in parsed.flags:
                pending.discard(parsed.stream_id)
                record["ended"].append(parsed.stream_id)
    record["unanswered"] = sorted(pending)
    return record


def headers_mode(options):
    blocks = refs_blocks(options) if options.mode == "refs" else ordinary_blocks(options)
    sock = connect(options)
    started = time.monotonic()
    send_blocks(sock, blocks)
    record = read_answers(sock, options, [2 * index + 1 for index in range(len(blocks))])
    record.update(mode=options.mode, blocks=len(blocks), block_bytes=len(blocks[-1]),
                  seconds=round(time.monotonic() - started, 3))
    sock.close()
    return record


def resident_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def ackflood_mode(options):
    """Bursts of PINGs and empty SETTINGS; never a byte read. Each burst provokes fewer ACKs
    than libnghttp2's cap of 1,000 queued ACKs, so only a server that stops writing them out
    can hit the cap."""
    sock = connect(options)
    sock.settimeout(0.2)
    settings_every = 10
    burst = b"".join(frame(SETTINGS, 0, 0) if index % settings_every == 0 else
                     frame(PING, 0, 0, struct.pack(">Q", index)) for index in range(options.burst))
    record = dict(mode="ackflood", frames=0, bytes=0, closed=False, error=None, blocked_seconds=0.0)
    if options.pid:
        record["rss_start_kib"] = record["rss_max_kib"] = resident_kib(options.pid)
    started = time.monotonic()
    while time.monotonic() - started < options.seconds:
        try:
            sent = sock.send(burst)
        except socket.timeout:
            record["blocked_seconds"] = round(record["blocked_seconds"] + 0.2, 1)
            sent = 0
        except OSError as error:
            record.update(closed=True, error=type(error).__name__)
            break
        if sent:
            record["frames"] += options.burst if sent == len(burst) else 0
            record["bytes"] += sent
        if options.pid:
            record["rss_max_kib"] = max(record["rss_max_kib"], resident_kib(options.pid))
        time.sleep(options.pause)
    record["seconds"] = round(time.monotonic() - started, 3)
    sock.close()
    return record


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("host")
    parser.add_argument("port", type=int)
    parser.add_argument("--mode", choices=["refs", "ordinary", "ackflood"], required=True)
    parser.add_argument("--blocks", type=int, default=50)
    parser.add_argument("--refs", type=int, default=10000)
    parser.add_argument("--value", type=int, default=4000)
    parser.add_argument("--list-bytes", type=int, default=32768)
    parser.add_argument("--deadline", type=float, default=60)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--burst", type=int, default=200)
    parser.add_argument("--pause", type=float, default=0.0005)
    parser.add_argument("--pid", type=int)
    options = parser.parse_args()
    record = ackflood_mode(options) if options.mode == "ackflood" else headers_mode(options)
    print(json.dumps(record, sort_keys=True))


if __name__ == "__main__":
    main()
