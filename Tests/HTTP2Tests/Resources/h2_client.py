#!/usr/bin/env python3
"""An independent HTTP/2 client (Debian's python3-h2) for H2PythonClientTests.

It talks to the test's HTTP2ServerSession through stdin/stdout in lockstep: it writes
b"B" + length + its bytes, reads length + the server's bytes, and so on; at the end it
writes b"E" + length + a JSON summary. Streams: POST /echo with a SIZE-byte body (byte i is
i*7 % 251) that the server echoes, GET /empty, and a request with an uppercase field name
(sent unvalidated) that the server must reset with PROTOCOL_ERROR.
"""
import hashlib, json, struct, sys

import h2.config, h2.connection, h2.events

size = int(sys.argv[1])
out, inp = sys.stdout.buffer, sys.stdin.buffer


def send(kind, data):
    out.write(kind + struct.pack(">I", len(data)) + data)
    out.flush()


def recv():
    header = inp.read(4)
    if len(header) < 4:
        sys.exit("the test closed the pipe")
    length = struct.unpack(">I", header)[0]
    data = b""
    while len(data) < length:
        chunk = inp.read(length - len(data))
        if not chunk:
            sys.exit("the test closed the pipe mid-message")
        data += chunk
    return data


config = h2.config.H2Configuration(client_side=True, validate_outbound_headers=False,
                                   normalize_outbound_headers=False)
conn = h2.connection.H2Connection(config=config)
conn.initiate_connection()
body = bytes((i * 7) % 251 for i in range(size))
base = [(":scheme", "http"), (":authority", "localhost")]
post = conn.get_next_available_stream_id()
conn.send_headers(post, [(":method", "POST"), (":path", "/echo")] + base + [("content-length", str(size))])
get = conn.get_next_available_stream_id()
conn.send_headers(get, [(":method", "GET"), (":path", "/empty")] + base, end_stream=True)
bad = conn.get_next_available_stream_id()
conn.send_headers(bad, [(":method", "GET"), (":path", "/bad")] + base + [("X-Upper", "1")], end_stream=True)

statuses, bodies, ended, resets = {}, {}, set(), {}
pending = body
for _ in range(100000):
    while pending and conn.local_flow_control_window(post) > 0:
        count = min(len(pending), conn.local_flow_control_window(post), conn.max_outbound_frame_size)
        conn.send_data(post, pending[:count], end_stream=count == len(pending))
        pending = pending[count:]
    send(b"B", conn.data_to_send())
    for event in conn.receive_data(recv()):
        if isinstance(event, h2.events.ResponseReceived):
            statuses[event.stream_id] = int(dict(event.headers)[b":status"])
        elif isinstance(event, h2.events.DataReceived):
            bodies[event.stream_id] = bodies.get(event.stream_id, b"") + event.data
            conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        elif isinstance(event, h2.events.StreamEnded):
            ended.add(event.stream_id)
        elif isinstance(event, h2.events.StreamReset):
            resets[event.stream_id] = int(event.error_code)
    if {post, get} <= ended and bad in resets:
        break
send(b"E", json.dumps({
    "post_status": statuses.get(post), "get_status": statuses.get(get),
    "echo_size": len(bodies.get(post, b"")),
    "echo_matches": hashlib.sha256(bodies.get(post, b"")).digest() == hashlib.sha256(body).digest(),
    "bad_reset": resets.get(bad), "ended": sorted(ended),
}).encode())
