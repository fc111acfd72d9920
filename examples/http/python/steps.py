"""The steps of the "py_invoice" workflow, as an HTTP endpoint.

Geneva's stock worker (`geneva worker`) runs each step by POSTing it here, to
/steps/<name>, and records what the reply says (docs/http-steps.md). Python 3.9+, standard library only:

    GENEVA_HTTP_SECRET=... python3 examples/http/python/steps.py [PORT]

PORT is the argument, else $PORT, else 8000 (0: any free port). ENDPOINT_URL
is the URL the definition names the endpoint by, before /steps/ (the
signature covers the URL): http://127.0.0.1:PORT unless set.
"""

import hashlib
import hmac
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SECRET = os.environ.get("GENEVA_HTTP_SECRET", "")


def verify(header, method, url, body, secret, tolerance=300):
    """Whether header is a Geneva-Signature of the request (its method, this
    endpoint's own URL for it, its raw body): t=<unix seconds>,v1=<hex>[,v1=<hex>]."""
    try:
        fields = [part.split("=", 1) for part in header.split(",")]
        t = dict(fields)["t"]
        if abs(time.time() - int(t)) > tolerance:
            return False
    except (KeyError, ValueError):
        return False
    signed = f"{t}\n{method}\n{url}\n".encode() + body
    expected = hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest().encode()
    return any(hmac.compare_digest(expected, v1.encode()) for name, v1 in fields if name == "v1")


# Each step takes the request's JSON and returns (status, reply[, headers]):
# reply None (an empty 2xx is success: the next step runs), a dict (JSON: a
# signal) or a str (an error's message).


def collect_lines(request):
    # A resumable step: one page per request, the page number its cursor.
    page = (request["cursor"] or {}).get("page", 1)
    # ... fetch page `page` of invoice request["hero_id"]'s lines, store them ...
    if page < 3:
        return 200, {"signal": "suspend", "cursor": {"page": page + 1}}
    return 204, None


def charge(request):
    # A real charge would give the payment provider an idempotency key that
    # holds across reattempts, such as f"invoice-{request['workflow_id']}".
    if request["attempt"] == 1:
        # Rate limited: error class http.status.429, which the definition's
        # policy reattempts, here after at least a second.
        return 429, "payment provider busy", {"Retry-After": "1"}
    return 200, None


def send_receipt(request):
    return 200, None


STEPS = {"collect_lines": collect_lines, "charge": charge, "send_receipt": send_receipt}


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        execution_id = self.headers.get("Geneva-Execution-Id")
        # the URL the worker was given, from this endpoint's own, not from
        # the Host header (which a replayed request sets as it likes)
        url = self.server.url + self.path
        if SECRET and not verify(self.headers.get("Geneva-Signature", ""), self.command, url, body, SECRET):
            print(f"{self.path} execution {execution_id}: bad signature", flush=True)
            return self.reply(401, "bad signature")
        step = STEPS.get(self.path.removeprefix("/steps/"))
        if step is None:
            print(f"{self.path} execution {execution_id}: no such step", flush=True)
            return self.reply(404, "no such step")
        request = json.loads(body)
        print(f"{request['step']} execution {execution_id} attempt {request['attempt']}", flush=True)
        try:
            result = step(request)
        except Exception as error:  # an error of class http.status.500, with this message
            result = 500, f"{type(error).__name__}: {error}"
        self.reply(*result)

    def reply(self, status, reply=None, headers=None):
        if isinstance(reply, dict):
            data, content_type = json.dumps(reply).encode(), "application/json"
        else:
            data, content_type = (reply or "").encode(), "text/plain; charset=utf-8"
        self.send_response(status)
        for name, value in {"Content-Type": content_type, **(headers or {})}.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format, *args):
        pass  # do_POST logs its own line


if __name__ == "__main__":
    port = int(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("PORT", 8000))
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.url = os.environ.get("ENDPOINT_URL", f"http://127.0.0.1:{server.server_port}").rstrip("/")
    if not SECRET:
        print("GENEVA_HTTP_SECRET is not set: signatures are not checked", flush=True)
    print(f"py_invoice steps on http://127.0.0.1:{server.server_port}/steps/", flush=True)
    server.serve_forever()
