"""A tiny HTTP/1.1 keep-alive server on 127.0.0.1 for the load-result captures.

/            200, a 64-byte body
/sleep/N     200 after sleeping N ms
/mixed       every 5th response is a 503 (the others 200, 64 bytes)
/status/N    status N, a 16-byte body
/slow        200 after 2 s (for client timeouts)
"""

import itertools
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BODY = b"x" * 63 + b"\n"
counter = itertools.count(1)
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # One write per response: headers and body in separate segments meet the delayed ACK.
    wbufsize = 65536
    disable_nagle_algorithm = True

    def do_GET(self):
        status, body = 200, BODY
        if self.path.startswith("/sleep/"):
            time.sleep(int(self.path.split("/")[2]) / 1000)
        elif self.path == "/mixed":
            with lock:
                n = next(counter)
            if n % 5 == 0:
                status, body = 503, b"unavailable....\n"
        elif self.path.startswith("/status/"):
            status, body = int(self.path.split("/")[2]), b"status.........\n"
        elif self.path == "/slow":
            time.sleep(2)
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256


if __name__ == "__main__":
    Server(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
