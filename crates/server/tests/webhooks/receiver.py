"""A webhook receiver as Burrow's users write one: it verifies every delivery with the
`standardwebhooks` package from PyPI (unchanged) and records what it got.

Run with the venv's python: `receiver.py [port]` (0 or absent: a free port). It prints
`PORT <n>` once listening. Control it over HTTP:
- `POST /_control` with `{"secrets": ["whsec_..."], "script": ["500", "sleep:3", "410", ...]}`:
  the secrets to verify with (any may match), and how to answer the next deliveries in turn
  (`<status>`, `sleep:<seconds>` then 200, or `redirect` to `/redirected` with 307); after the
  script, 200.
- `GET /_received`: every delivery so far, in arrival order, as
  `{"id", "path", "verified", "error", "status", "payload"}`.
"""

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook

lock = threading.Lock()
state = {"secrets": [], "script": [], "received": []}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, body=b"", location=None):
        self.send_response(status)
        if location:
            self.send_header("location", location)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def read_body(self):
        return self.rfile.read(int(self.headers.get("content-length", "0")))

    def do_GET(self):
        if self.path == "/_received":
            with lock:
                body = json.dumps(state["received"]).encode()
            self.answer(200, body)
        else:
            self.answer(404)

    def do_POST(self):
        body = self.read_body()
        if self.path == "/_control":
            control = json.loads(body)
            with lock:
                state["secrets"] = control.get("secrets", state["secrets"])
                state["script"] = list(control.get("script", []))
            self.answer(200, b"{}")
            return
        headers = {name: value for name, value in self.headers.items()}
        with lock:
            secrets = list(state["secrets"])
            step = state["script"].pop(0) if state["script"] else "200"
        payload, error = None, None
        for secret in secrets:
            try:
                payload = Webhook(secret).verify(body, headers)
                error = None
                break
            except Exception as failure:  # noqa: BLE001 - the reason is what the test shows
                error = f"{type(failure).__name__}: {failure}"
        if not secrets:
            error = "no secret configured"
        location = None
        if step.startswith("sleep:"):
            time.sleep(float(step.split(":", 1)[1]))
            status = 200
        elif step == "redirect":
            status, location = 307, "/redirected"
        else:
            status = int(step)
        with lock:
            state["received"].append(
                {
                    "id": headers.get("webhook-id") or headers.get("Webhook-Id"),
                    "path": self.path,
                    "verified": payload is not None,
                    "error": error,
                    "status": status,
                    "payload": payload if payload is not None else body.decode("utf-8", "replace"),
                }
            )
        self.answer(status, b"ok", location)


def main():
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
