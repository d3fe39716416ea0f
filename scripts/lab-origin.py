#!/usr/bin/env python3
"""scripts/lab-origin.py — the lab's dynamic HTTP origin (behind nginx).

Started by `scripts/lab up`; nginx proxies the paths below to it on every
origin (127.0.0.10 www, .11 cdn, .66 hijacker, [::1] v6), passing the origin
name in `X-Lab-Origin` and the client's Host header unchanged. Python 3
standard library only. HTTP/1.1 with keep-alive; request bodies are read with
Content-Length or chunked transfer coding (decoded here) and never held in
memory; large responses are streamed.

Text bodies end with "\\n". Every response carries `X-Lab-Origin: <name>`.

  ANY  /echo                    200 "origin=<o> host=<Host> method=<M> length=<n> sha256=<hex>"
  GET  /bytes/<n>[?fill=zero]   200, n bytes, Content-Length n; byte i = i % 251
                                (or all zeros with fill=zero), streamed in ~1 MiB writes
  ANY  /redirect/<code>?to=<u>  <code> in 301 302 303 307 308; Location: <u>; body "redirect"
  ANY  /redirect-chain/<n>      n > 0: 302, Location: /redirect-chain/<n-1> (query kept),
                                body "redirect"; n = 0: 200
                                "chain-end origin=<o> host=<Host> method=<M>"
  GET  /cookies/set?a=1&b=2     200, one "Set-Cookie: <name>=<value>; Path=/" per pair;
                                body "set a=1 b=2"
  GET  /cookies                 200 "cookie=<Cookie header or empty>"
  GET  /slow/<ms>               headers at once, body "slow" after <ms> ms
  GET  /drip/<n>/<ms>           Content-Length n; then n times: wait <ms> ms, send one
                                byte (same pattern as /bytes)
  ANY  /status/<code>           <code> (200-599) with body "status=<code>"
                                (no body for 204, 304 and HEAD)
  GET  /headers                 the request headers as received (after nginx), one
                                "name: value" per line; X-Lab-Origin left out

Anything else: 404 "not found". Bad numbers: 400 "bad request: <why>".
Requests with a body are always drained, so keep-alive stays in sync.

usage: lab-origin.py --port-file FILE [--bind 127.0.0.1] [--port 0]
The listening port is written to FILE (atomically) once the socket listens.
"""

import argparse
import hashlib
import http.server
import os
import sys
import time
import urllib.parse
from http import HTTPStatus

MAX_BYTES = 4 << 30           # /bytes and /echo sanity cap (4 GiB)
MAX_DELAY_MS = 10 * 60 * 1000  # /slow and /drip: at most 10 minutes in total
READ_SIZE = 1 << 20

# A block of the /bytes pattern whose length is a multiple of 251, so
# consecutive blocks continue the pattern (byte i == i % 251).
_PATTERN = bytes(range(251)) * 4096
_ZEROS = bytes(len(_PATTERN))


class BadRequest(Exception):
    pass


def _int(text, what, lo, hi):
    try:
        if not text.isdigit():
            raise ValueError
        v = int(text)
    except ValueError:
        raise BadRequest(f"{what} is not a number: {text!r}") from None
    if not lo <= v <= hi:
        raise BadRequest(f"{what} out of range {lo}..{hi}: {v}")
    return v


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "lab-origin"

    def version_string(self):
        return self.server_version
    # Idle keep-alive connections (and stalled uploads) are dropped after this.
    timeout = 300

    # ------------------------------------------------------------ plumbing

    def origin(self):
        return self.headers.get("X-Lab-Origin", "direct")

    def host(self):
        return self.headers.get("Host", "")

    def log_message(self, fmt, *args):
        sys.stderr.write("%s %s %s\n" % (time.strftime("%H:%M:%S"), self.origin(),
                                         fmt % args))
        sys.stderr.flush()

    def read_body(self, sink=None):
        """Read the whole request body (chunked or Content-Length), feeding
        each piece to sink; return the number of bytes."""
        te = self.headers.get("Transfer-Encoding", "")
        if te:
            codings = [c.strip().lower() for c in te.split(",") if c.strip()]
            if codings[-1:] != ["chunked"]:
                self.close_connection = True
                raise BadRequest(f"unsupported Transfer-Encoding: {te}")
            return self._read_chunked(sink)
        cl = self.headers.get("Content-Length")
        if cl is None:
            return 0
        n = _int(cl.strip(), "Content-Length", 0, MAX_BYTES)
        total, left = 0, n
        while left > 0:
            data = self.rfile.read(min(left, READ_SIZE))
            if not data:
                self.close_connection = True
                raise ConnectionError("body ended early")
            if sink:
                sink(data)
            total += len(data)
            left -= len(data)
        return total

    def _read_chunked(self, sink):
        total = 0
        while True:
            line = self.rfile.readline(65537)
            if not line:
                self.close_connection = True
                raise ConnectionError("chunked body ended early")
            size_text = line.split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                self.close_connection = True
                raise BadRequest(f"bad chunk size line: {line[:40]!r}") from None
            if size == 0:
                break
            left = size
            while left > 0:
                data = self.rfile.read(min(left, READ_SIZE))
                if not data:
                    self.close_connection = True
                    raise ConnectionError("chunk ended early")
                if sink:
                    sink(data)
                total += len(data)
                left -= len(data)
            if self.rfile.readline(3) not in (b"\r\n", b"\n"):
                self.close_connection = True
                raise BadRequest("missing CRLF after chunk")
        # Trailer section, up to the empty line.
        while True:
            line = self.rfile.readline(65537)
            if line in (b"\r\n", b"\n", b""):
                break
        return total

    def send(self, code, body=b"", headers=(), ctype="text/plain; charset=utf-8"):
        if isinstance(body, str):
            body = body.encode("utf-8")
        self.send_response(code)
        self.send_header("X-Lab-Origin", self.origin())
        no_body = code in (204, 304) or 100 <= code < 200
        if not no_body:
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        if body and not no_body and self.command != "HEAD":
            self.wfile.write(body)

    # ------------------------------------------------------------ dispatch

    def handle_one_request(self):
        try:
            super().handle_one_request()
        except (ConnectionError, TimeoutError, OSError):
            self.close_connection = True

    def dispatch(self):
        url = urllib.parse.urlsplit(self.path)
        path = url.path
        parts = path.strip("/").split("/")
        body_done = False
        try:
            if path == "/echo":
                body_done = True
                self.ep_echo()
                return
            # Any other endpoint ignores a request body, but must drain it.
            self.read_body()
            body_done = True
            query = url.query
            head, args = parts[0], parts[1:]
            if head == "bytes" and len(args) == 1:
                self.ep_bytes(args[0], query)
            elif head == "redirect" and len(args) == 1:
                self.ep_redirect(args[0], query)
            elif head == "redirect-chain" and len(args) == 1:
                self.ep_chain(args[0], query)
            elif path == "/cookies/set":
                self.ep_cookies_set(query)
            elif path == "/cookies":
                self.send(200, f"cookie={'; '.join(self.headers.get_all('Cookie') or [])}\n")
            elif head == "slow" and len(args) == 1:
                self.ep_slow(args[0])
            elif head == "drip" and len(args) == 2:
                self.ep_drip(args[0], args[1])
            elif head == "status" and len(args) == 1:
                code = _int(args[0], "status", 200, 599)
                self.send(code, f"status={code}\n")
            elif path == "/headers":
                lines = "".join(f"{k}: {v}\n" for k, v in self.headers.items()
                                if k.lower() != "x-lab-origin")
                self.send(200, lines)
            else:
                self.send(404, "not found\n")
        except BadRequest as e:
            if not body_done:
                self.close_connection = True
            self.send(400, f"bad request: {e}\n")

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = dispatch

    # ------------------------------------------------------------ endpoints

    def ep_echo(self):
        h = hashlib.sha256()
        n = self.read_body(h.update)
        self.send(200, f"origin={self.origin()} host={self.host()} method={self.command} "
                       f"length={n} sha256={h.hexdigest()}\n")

    def ep_bytes(self, n_text, query):
        n = _int(n_text, "length", 0, MAX_BYTES)
        q = dict(urllib.parse.parse_qsl(query, keep_blank_values=True))
        block = _ZEROS if q.get("fill") == "zero" else _PATTERN
        self.send_response(200)
        self.send_header("X-Lab-Origin", self.origin())
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(n))
        self.end_headers()
        if self.command == "HEAD":
            return
        view, left = memoryview(block), n
        while left > 0:
            k = min(left, len(view))
            self.wfile.write(view[:k])
            left -= k

    def ep_redirect(self, code_text, query):
        code = _int(code_text, "redirect code", 0, 999)
        if code not in (301, 302, 303, 307, 308):
            raise BadRequest(f"redirect code must be 301, 302, 303, 307 or 308: {code}")
        q = urllib.parse.parse_qs(query, keep_blank_values=True)
        if "to" not in q:
            raise BadRequest("missing ?to=")
        self.send(code, "redirect\n", headers=[("Location", q["to"][0])])

    def ep_chain(self, n_text, query):
        n = _int(n_text, "chain length", 0, 1000)
        if n == 0:
            self.send(200, f"chain-end origin={self.origin()} host={self.host()} "
                           f"method={self.command}\n")
        else:
            loc = f"/redirect-chain/{n - 1}" + (f"?{query}" if query else "")
            self.send(302, "redirect\n", headers=[("Location", loc)])

    def ep_cookies_set(self, query):
        pairs = urllib.parse.parse_qsl(query, keep_blank_values=True)
        bad = set(' \t\r\n;,"\\')
        for k, v in pairs:
            if not k or bad & set(k + v) or "=" in k:
                raise BadRequest(f"cookie not representable: {k!r}={v!r}")
        self.send(200, "set" + "".join(f" {k}={v}" for k, v in pairs) + "\n",
                  headers=[("Set-Cookie", f"{k}={v}; Path=/") for k, v in pairs])

    def ep_slow(self, ms_text):
        ms = _int(ms_text, "delay", 0, MAX_DELAY_MS)
        body = b"slow\n"
        self.send_response(200)
        self.send_header("X-Lab-Origin", self.origin())
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.flush()
        time.sleep(ms / 1000)
        if self.command != "HEAD":
            self.wfile.write(body)

    def ep_drip(self, n_text, ms_text):
        n = _int(n_text, "length", 0, 1 << 20)
        ms = _int(ms_text, "interval", 0, MAX_DELAY_MS)
        if n * ms > MAX_DELAY_MS:
            raise BadRequest(f"drip would take longer than {MAX_DELAY_MS} ms")
        self.send_response(200)
        self.send_header("X-Lab-Origin", self.origin())
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(n))
        self.end_headers()
        self.wfile.flush()
        if self.command == "HEAD":
            return
        for i in range(n):
            time.sleep(ms / 1000)
            self.wfile.write(_PATTERN[i % 251:i % 251 + 1])


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128


def main():
    ap = argparse.ArgumentParser(description="HostPin lab dynamic origin")
    ap.add_argument("--bind", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file", required=True)
    a = ap.parse_args()
    srv = Server((a.bind, a.port), Handler)
    port = srv.server_address[1]
    tmp = f"{a.port_file}.tmp.{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(f"{port}\n")
    os.replace(tmp, a.port_file)
    sys.stderr.write(f"lab-origin listening on {a.bind}:{port}\n")
    sys.stderr.flush()
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
