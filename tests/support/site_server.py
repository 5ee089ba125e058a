"""A local HTTP server for the browser tests and benchmarks: test pages and corpus pages.

``/site/NAME`` serves ``tests/sites/NAME`` (a folder: its ``index.html``; ``{port}`` replaced
by the server's port);
``/corpus/PAGE/`` and ``/PAGE.html`` serve the corpus page's saved ``source.html`` (the
corpus was captured at ``http://corpus.local/PAGE.html``: map that host here with
:meth:`SiteServer.corpus_host_rule` and the page gets its original URL). Everything else is 404, and
the browser is told to refuse other hosts, so runs are sealed and repeatable.
``/cached?k=K`` answers what the HTTP cache keeps an hour; ``/redirect?to=URL&code=N`` answers a redirect to URL (GET or POST); ``/slow?ms=N`` answers
"late" after N ms (work a page waits for after an action); ``/download?name=N&bytes=K`` a file
to save; ``requests`` lists every
request that reached the server, with its Host header.
"""

from __future__ import annotations

import gzip
import http.server
import threading
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

HERE = Path(__file__).parent.parent  # tests/
SITES = HERE / "sites"
CORPUS = HERE / "corpus"


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        path = self.path.split("?", 1)[0].split("#", 1)[0]
        self.server.requests.append((self.headers.get("Host", ""), self.command, self.path))  # type: ignore[attr-defined]
        if path == "/redirect":
            # /redirect?to=URL&code=302: a redirect to anywhere, as an allowed host may send.
            query = parse_qs(urlsplit(self.path).query)
            self.send_response(int(query.get("code", ["302"])[0]))
            self.send_header("Location", query.get("to", ["/"])[0])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if path == "/cached":
            # /cached?k=KEY: a response the browser's HTTP cache keeps for an hour.
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Cache-Control", "public, max-age=3600")
            self.send_header("Content-Length", "6")
            self.end_headers()
            self.wfile.write(b"cached")
            return
        if path == "/slow":
            time.sleep(float(parse_qs(urlsplit(self.path).query).get("ms", ["500"])[0]) / 1e3)
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", "4")
            self.end_headers()
            self.wfile.write(b"late")
            return
        if path == "/download":
            # /download?name=N&bytes=K: a file to save, not a page (Content-Disposition: attachment).
            query = parse_qs(urlsplit(self.path).query)
            data = b"x" * int(query.get("bytes", ["12"])[0])
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Disposition", f'attachment; filename="{query.get("name", ["file.bin"])[0]}"')
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        body: bytes | None = None
        if path.startswith("/site/"):
            file = SITES / path[len("/site/") :]
            if file.is_dir():
                file = file / "index.html"
            if file.is_file() and SITES in file.resolve().parents:
                body = file.read_bytes().replace(b"{port}", str(self.server.server_address[1]).encode())
        elif path.startswith("/corpus/") or (path.endswith(".html") and path.count("/") == 1):
            # /corpus/NAME/, or /NAME.html as the pages were captured (http://corpus.local/NAME.html)
            name = path[len("/corpus/") :].strip("/") if path.startswith("/corpus/") else path[1 : -len(".html")]
            file = CORPUS / name / "source.html.gz"
            if name and "/" not in name and file.is_file():
                body = gzip.decompress(file.read_bytes())
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        kind = "text/css" if path.endswith(".css") else "text/html"  # a style sheet of another origin needs its type
        self.send_header("Content-Type", f"{kind}; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self.do_GET()

    def log_message(self, *args: object) -> None:
        pass


class SiteServer:
    def __init__(self) -> None:
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        # (Host header, method, path) of every request, in order: what reached the server.
        self.requests: list[tuple[str, str, str]] = []
        self._server.requests = self.requests  # type: ignore[attr-defined]
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}/{path.lstrip('/')}"

    def corpus_host_rule(self) -> str:
        """A Chromium flag that sends http://corpus.local/ to this server."""
        return f"--host-resolver-rules=MAP corpus.local 127.0.0.1:{self.port}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
