#!/usr/bin/env python3
"""A Werkzeug upload server for the conformance matrix: answers every POST with what
Werkzeug's multipart parser saw, as {"fields": {...}, "files": [...]} (sha256 per file), and
the Werkzeug version that parsed it ("werkzeug": 2.3 and later read `%22` in a quoted name or
filename as `"`, Debian 12's 2.2 does not)."""
import hashlib, importlib.metadata, json, sys

from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response


version = importlib.metadata.version("werkzeug")


@Request.application
def application(request):
    files = []
    for field, storage in request.files.items(multi=True):
        content = storage.read()
        files.append({"field": field, "filename": storage.filename, "type": storage.mimetype,
                      "size": len(content), "sha256": hashlib.sha256(content).hexdigest()})
    fields = {name: value for name, value in request.form.items(multi=True)}
    body = json.dumps({"fields": fields, "files": files, "werkzeug": version}, ensure_ascii=False)
    return Response(body, content_type="application/json; charset=utf-8")


server = make_server("127.0.0.1", 0, application, threaded=True)
print(f"listening on 127.0.0.1:{server.server_port}", file=sys.stderr, flush=True)
server.serve_forever()
