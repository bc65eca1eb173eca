"""A range-capable HTTP/1.1 file server for the remote-file tests, on loopback only.

Serves the files of one folder with `Range: bytes=a-b` (one range, 206 with Content-Range),
HEAD, ETags with If-Match (412 when the file changed), and counts what it serves; with
`--writable` also PUT (the body to a temporary file, renamed over the target once whole and the
request's If-Match / If-None-Match hold, else 412; 201 or 204 with the new ETag; without it,
405). It also counts what it serves: GET /__stats__ answers JSON {"requests": n, "bytes": n
(asked), "sent": n (reached the socket), "log": [[method, path, start, end], ...]} and
GET /__reset__ zeroes the counters (neither is counted). Started by the tests: `python range_server.py DIR`; prints `PORT n` when listening.
"""
import json
import mimetypes
import os
import re
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = os.path.abspath(sys.argv[1])
WRITABLE = "--writable" in sys.argv[2:]
LOCK = threading.Lock()
# "bytes": what the requests asked for; "sent": what reached the socket (a client that stops
# reading an answer leaves the rest unsent once the sockets' buffers are full).
STATS = {"requests": 0, "bytes": 0, "sent": 0, "log": []}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def setup(self):
        super().setup()
        # As production servers do: without it, a response's headers and body in two sends
        # meet the client's delayed ACK (40 ms a request on Linux).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def _json(self, obj):
        body = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _file(self):
        rel = self.path.split("?", 1)[0].lstrip("/")
        full = os.path.abspath(os.path.join(ROOT, rel))
        if not full.startswith(ROOT + os.sep) or not os.path.isfile(full):
            return None, 0
        return full, os.path.getsize(full)

    def _serve(self, head):
        if self.path == "/__stats__":
            with LOCK:
                return self._json(STATS)
        if self.path == "/__reset__":
            with LOCK:
                STATS.update(requests=0, bytes=0, sent=0, log=[])
            return self._json({"ok": True})
        full, size = self._file()
        if full is None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        etag = f'"{size}-{os.stat(full).st_mtime_ns}"'
        wanted = self.headers.get("If-Match")
        if wanted and wanted.strip() not in ("*", etag):
            self.send_response(412)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        start, end, status = 0, size, 200
        rng = self.headers.get("Range")
        if rng:
            m = re.fullmatch(r"bytes=(\d*)-(\d*)", rng.strip())
            if not m or (m.group(1) == "" and m.group(2) == ""):
                self.send_response(416)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if m.group(1) == "":
                start, end = max(0, size - int(m.group(2))), size
            else:
                start = int(m.group(1))
                end = min(size, int(m.group(2)) + 1) if m.group(2) else size
            if start >= size:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            status = 206
        n = 0 if head else end - start
        with LOCK:
            STATS["requests"] += 1
            STATS["bytes"] += n
            STATS["log"].append([self.command, self.path, start, end])
        self.send_response(status)
        self.send_header("Content-Length", str(end - start))
        self.send_header("Accept-Ranges", "bytes")
        # The web viewer's page, script and module are served from here too.
        kind = mimetypes.guess_type(full)[0]
        if full.endswith(".wasm"):
            kind = "application/wasm"
        if kind:
            self.send_header("Content-Type", kind)
        self.send_header("Last-Modified", "Tue, 24 Nov 2026 00:00:00 GMT")
        self.send_header("ETag", etag)
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{end - 1}/{size}")
        self.end_headers()
        if head:
            return
        with open(full, "rb") as f:
            f.seek(start)
            left = end - start
            while left:
                chunk = f.read(min(left, 1 << 20))
                if not chunk:
                    break
                self.wfile.write(chunk)
                with LOCK:
                    STATS["sent"] += len(chunk)
                left -= len(chunk)

    def _empty(self, status, etag=None):
        self.send_response(status)
        if etag:
            self.send_header("ETag", etag)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_PUT(self):
        if not WRITABLE:
            # As servers do: the body read and dropped, then the refusal.
            left = int(self.headers.get("Content-Length") or 0)
            while left > 0:
                chunk = self.rfile.read(min(left, 1 << 20))
                if not chunk:
                    break
                left -= len(chunk)
            return self._empty(405)
        rel = self.path.split("?", 1)[0].lstrip("/")
        full = os.path.abspath(os.path.join(ROOT, rel))
        if not full.startswith(ROOT + os.sep) or "Content-Length" not in self.headers:
            return self._empty(400)
        left = int(self.headers["Content-Length"])
        os.makedirs(os.path.dirname(full), exist_ok=True)
        tmp = f"{full}.put-{threading.get_ident()}"
        try:
            with open(tmp, "wb") as f:
                while left:
                    chunk = self.rfile.read(min(left, 1 << 20))
                    if not chunk:
                        raise ConnectionError("the body ended early")
                    f.write(chunk)
                    left -= len(chunk)
            with LOCK:
                exists = os.path.isfile(full)
                etag = f'"{os.path.getsize(full)}-{os.stat(full).st_mtime_ns}"' if exists else None
                match = self.headers.get("If-Match")
                none_match = self.headers.get("If-None-Match")
                if (match and match.strip() not in ("*", etag)) or (match and not exists) or (none_match == "*" and exists):
                    os.unlink(tmp)
                    return self._empty(412)
                os.replace(tmp, full)
                st = os.stat(full)
                STATS["log"].append(["PUT", self.path, 0, st.st_size])
            return self._empty(204 if exists else 201, f'"{st.st_size}-{st.st_mtime_ns}"')
        except (ConnectionError, OSError):
            if os.path.exists(tmp):
                os.unlink(tmp)
            self.close_connection = True

    def do_GET(self):
        self._serve(False)

    def do_HEAD(self):
        self._serve(True)


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print("PORT", server.server_address[1], flush=True)
    server.serve_forever()
