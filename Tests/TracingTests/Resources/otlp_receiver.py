"""A loopback OTLP/HTTP trace receiver for the tracing tests, parsing with opentelemetry-proto.

Runs under the SDK venv's python ($FORMGATE_SDK_PYTHON: opentelemetry-proto and protobuf, pinned
in scripts/sdk-requirements.txt). Two modes:

    otlp_receiver.py decode IN OUT
        Reads one ExportTraceServiceRequest in OTLP/HTTP JSON from the file IN and writes to OUT
        what the protobuf message holds, as JSON: {"errors": [...], "request": {...}}.

    otlp_receiver.py serve [--responses 503,200] [--retry-after SECONDS] [--stall] [--close-after-answer]
        Serves POST on 127.0.0.1 (a free port, announced on stderr as `listening on HOST:PORT`).
        The Nth POST is answered with the Nth status of --responses (the last one repeats;
        200 by default), with Retry-After on a 429 or 503 when given. With --stall, each POST
        waits, after its `arrived` line, until `GET /release`. With --close-after-answer, the
        connection is closed after each answer without saying so (as a collector's idle timeout
        would close a keep-alive connection). Every POST writes JSON lines to
        stdout: {"event": "arrived", "request": N} when its body is read, then
        {"event": "answered", "request": N, "status": S, "time": T, "spans": [[traceId, spanId,
        name], ...], "errors": [...], "detail": {"resources": [...]}} just before the answer is
        sent (T: time.monotonic(); detail: every span as protobuf parsed it, ids in hex).

The JSON is checked the way OTLP's JSON mapping differs from protobuf's: traceId, spanId and
parentSpanId must be lower-case hex of 32 / 16 digits (protobuf would read base64: they are
converted to base64 before json_format.Parse), and 64-bit integers must be strings. Anything
else json_format.Parse refuses (unknown fields, wrong types) is an error too.
"""
import base64, json, re, signal, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

try:
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
except ImportError as error:
    sys.exit(f"otlp_receiver: {error} (the SDK venv needs opentelemetry-proto: make sdk-venv)")

ID_LENGTHS = {"traceId": 32, "spanId": 16, "parentSpanId": 16}
INT64_FIELDS = ("startTimeUnixNano", "endTimeUnixNano", "timeUnixNano", "intValue")


def check_raw(node, path, errors):
    """Checks the OTLP exceptions in the raw JSON and turns hex ids into base64 for protobuf."""
    if isinstance(node, dict):
        for key, value in list(node.items()):
            where = f"{path}.{key}"
            if key in ID_LENGTHS:
                if not isinstance(value, str) or not re.fullmatch(f"[0-9a-f]{{{ID_LENGTHS[key]}}}", value):
                    errors.append(f"{where}: {value!r} is not {ID_LENGTHS[key]} lower-case hex digits")
                    continue
                node[key] = base64.b64encode(bytes.fromhex(value)).decode()
            elif key in INT64_FIELDS and not isinstance(value, str):
                errors.append(f"{where}: {value!r} is not a decimal string")
            else:
                check_raw(value, where, errors)
    elif isinstance(node, list):
        for index, item in enumerate(node):
            check_raw(item, f"{path}[{index}]", errors)


def attributes(values):
    out = []
    for attribute in values:
        kind = attribute.value.WhichOneof("value")
        value = getattr(attribute.value, kind) if kind else None
        if kind == "int_value":
            value = str(value)
        elif kind == "double_value":
            value = repr(value)
        out.append([attribute.key, kind, value])
    return out


def describe(request):
    """What the parsed message holds, ids as hex, 64-bit numbers as strings."""
    resources = []
    for resource_spans in request.resource_spans:
        scopes = []
        for scope_spans in resource_spans.scope_spans:
            spans = []
            for span in scope_spans.spans:
                spans.append({
                    "traceId": span.trace_id.hex(), "spanId": span.span_id.hex(),
                    "parentSpanId": span.parent_span_id.hex(), "name": span.name, "kind": int(span.kind),
                    "start": str(span.start_time_unix_nano), "end": str(span.end_time_unix_nano),
                    "attributes": attributes(span.attributes),
                    "events": [{"time": str(event.time_unix_nano), "name": event.name,
                                "attributes": attributes(event.attributes)} for event in span.events],
                    "status": {"code": int(span.status.code), "message": span.status.message},
                    "hasStatus": span.HasField("status"),
                })
            scopes.append({"name": scope_spans.scope.name, "version": scope_spans.scope.version, "spans": spans})
        resources.append({"attributes": attributes(resource_spans.resource.attributes), "scopes": scopes})
    return {"resources": resources}


def decode(raw):
    """(errors, description or None) for one request body."""
    errors = []
    try:
        document = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        return [f"not JSON: {error}"], None
    check_raw(document, "$", errors)
    request = trace_service_pb2.ExportTraceServiceRequest()
    try:
        json_format.Parse(json.dumps(document), request)
    except json_format.ParseError as error:
        return errors + [f"json_format.Parse: {error}"], None
    return errors, describe(request)


class Receiver(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    statuses = [200]
    retry_after = None
    stall = False
    close_after_answer = False
    released = threading.Event()
    lock = threading.Lock()
    count = 0

    def log_message(self, *args):
        pass

    def emit(self, record):
        with Receiver.lock:
            sys.stdout.write(json.dumps(record) + "\n")
            sys.stdout.flush()

    def answer(self, status, body=b"{}"):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if status in (429, 503) and Receiver.retry_after is not None:
            self.send_header("Retry-After", Receiver.retry_after)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/release":
            Receiver.released.set()
        self.answer(200)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with Receiver.lock:
            number = Receiver.count
            Receiver.count += 1
        self.emit({"event": "arrived", "request": number})
        if Receiver.stall:
            Receiver.released.wait()
        status = Receiver.statuses[min(number, len(Receiver.statuses) - 1)]
        errors, description = decode(body)
        if self.headers.get("Content-Type") != "application/json":
            errors.append(f"Content-Type {self.headers.get('Content-Type')!r}")
        spans = []
        for resource in (description or {}).get("resources", []):
            for scope in resource["scopes"]:
                spans += [[span["traceId"], span["spanId"], span["name"]] for span in scope["spans"]]
        self.emit({"event": "answered", "request": number, "status": status, "time": time.monotonic(),
                   "spans": spans, "errors": errors, "detail": description})
        self.answer(status)
        if Receiver.close_after_answer:
            self.close_connection = True


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "decode":
        with open(sys.argv[2], "rb") as source:
            errors, description = decode(source.read())
        with open(sys.argv[3], "w") as out:
            json.dump({"errors": errors, "request": description}, out)
        return
    if len(sys.argv) < 2 or sys.argv[1] != "serve":
        sys.exit(__doc__)
    arguments = sys.argv[2:]
    while arguments:
        option = arguments.pop(0)
        if option == "--responses":
            Receiver.statuses = [int(code) for code in arguments.pop(0).split(",")]
        elif option == "--retry-after":
            Receiver.retry_after = arguments.pop(0)
        elif option == "--stall":
            Receiver.stall = True
        elif option == "--close-after-answer":
            Receiver.close_after_answer = True
        else:
            sys.exit(f"otlp_receiver: unknown option {option}")
    # The test process may block SIGTERM, and a child inherits the mask: unblock it, so the
    # test's SIGTERM stops the receiver at once.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    server.daemon_threads = True
    print(f"listening on 127.0.0.1:{server.server_address[1]}", file=sys.stderr, flush=True)
    server.serve_forever()


main()
