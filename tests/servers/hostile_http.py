"""An HTTP/1.1 server on loopback that misbehaves as real ones do, for the remote-file tests.

    python hostile_http.py MODE FILE [SECONDS]

serves FILE's bytes at every path; MODE is
  drip     every answer's headers are sent one byte every SECONDS (0.5 by default): a stalled
           or overloaded server that never quite answers;
  norange  `Range` is ignored: every GET is 200 with the whole file, as `python -m http.server`
           answers (HEAD too), with a Content-Length and no ETag;
  noetag   ranges answered (206) from FILE as it is on disk at each request, with its mtime as
           Last-Modified and no ETag (a plain server: a file rewritten in place in the same size
           is told only by its Last-Modified).
Prints `PORT n` once listening; serves until its standard input closes. GET /__stats__ answers
{"requests": n} (itself not counted).
"""
import email.utils
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODE = sys.argv[1]
with open(sys.argv[2], "rb") as f:
    DATA = f.read()
SECONDS = float(sys.argv[3]) if len(sys.argv) > 3 else 0.5
LOCK = threading.Lock()
STATS = {"requests": 0}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _answer(self, head):
        if self.path == "/__stats__":
            body = json.dumps(STATS).encode()
            self.wfile.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body
            )
            return
        with LOCK:
            STATS["requests"] += 1
        if MODE == "drip":
            lines = ["HTTP/1.1 206 Partial Content", "Content-Range: bytes 0-0/%d" % len(DATA), "Content-Length: 1"]
            text = ("\r\n".join(lines) + "\r\n\r\n").encode()
            for i in range(len(text)):
                try:
                    self.wfile.write(text[i : i + 1])
                    self.wfile.flush()
                except OSError:
                    return
                time.sleep(SECONDS)
            if not head:
                self.wfile.write(DATA[:1])
            return
        if MODE == "noetag":
            with open(sys.argv[2], "rb") as f:
                data = f.read()
            mtime = os.path.getmtime(sys.argv[2])
            m = re.match(r"bytes=(\d+)-(\d*)$", self.headers.get("Range", ""))
            start, end = 0, len(data) - 1
            if m:
                start = int(m.group(1))
                end = min(int(m.group(2)) if m.group(2) else len(data) - 1, len(data) - 1)
            body = data[start : end + 1]
            self.send_response(206 if m else 200)
            if m:
                self.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Last-Modified", email.utils.formatdate(mtime, usegmt=True))
            self.end_headers()
            if not head:
                self.wfile.write(body)
            return
        # norange: the whole file, whatever was asked.
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(DATA)))
        self.send_header("Last-Modified", "Mon, 01 Jan 2024 00:00:00 GMT")
        self.end_headers()
        if not head:
            try:
                self.wfile.write(DATA)
            except OSError:
                return

    def do_GET(self):
        self._answer(False)

    def do_HEAD(self):
        self._answer(True)


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"PORT {server.server_address[1]}", flush=True)
    sys.stdin.read()
    server.shutdown()
    os._exit(0)


if __name__ == "__main__":
    main()
