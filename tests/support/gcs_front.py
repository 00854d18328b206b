"""fake-gcs-server as Hadoop's own connector, hadoop-gcp 3.5.0, can reach it: a front on
127.0.0.1 that serves HTTPS as Google's hosts and hands each request on to the server.

hadoop-gcp has no endpoint setting: its Cloud Storage client (google-cloud-storage 2.52, inside
the jar) always asks ``https://storage.googleapis.com``. The JVM reaches the front through
`support.google_hosts.connect_proxy` (``https.proxyHost``) and trusts it through a trust store
(`java_trust_store`, ``javax.net.ssl.trustStore``). The front also makes up for what the server
does not do as Cloud Storage does, for this client:

- its batch requests go to ``//batch/storage/v1`` (the client's root URL ends with ``/``), which
  the server answers 404: the front takes the leading slashes off;
- it answers the start of a resumable upload with the session's address on its own scheme
  and host: the front names Google's host again, so that the upload comes back to it;
- it answers every request with ``Connection: close``: a connection the JVM kept for later
  through the proxy's tunnel failed once with "Socket closed", and an upload with it;
- hadoop-gcp renames an object within a bucket with ``objects.move`` (``.../moveTo/o/DST``),
  always, and the server has no such call: the front copies the object and deletes it (not
  atomic, as the move is; the tests do not move an object twice at once);
- ``fs.gs.auth.type=UNAUTHENTICATED`` fails (NullPointerException in the client's
  ``setCredentials``), so the driver uses ``USER_CREDENTIALS`` with a token server, which the
  front answers too (``POST /token``, any body: one access token).
"""

from __future__ import annotations

import http.client
import http.server
import re
import shutil
import ssl
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

from support.google_hosts import Certificates, serving

_MOVE = re.compile(r"(/storage/v1/b/([^/]+)/o/)(.+)/moveTo/o/([^?]+)")
_TOKEN = b'{"access_token": "no-credentials", "expires_in": 3600, "token_type": "Bearer"}'
GOOGLE = "https://storage.googleapis.com"
_GOOGLE = re.compile(r"^https?://[^/]+")
_HOP = {"connection", "proxy-connection", "keep-alive", "transfer-encoding", "content-length"}


@dataclass
class Front:
    """A running `gcs_front`: its address, and the objects it moved, by the ``bucket/name`` they
    were moved to."""

    address: tuple[str, int]
    moves: list[str] = field(default_factory=list)


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # TCP_NODELAY: an answer's headers and body, sent at once
    server: _FrontServer

    def log_message(self, format: str, *args: object) -> None:
        pass  # the server logs what it serves

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            parts = []
            while size := int(self.rfile.readline().split(b";")[0].strip(), 16):
                parts.append(self.rfile.read(size))
                self.rfile.readline()
            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                pass  # trailers
            return b"".join(parts)
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _send(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        self.send_response(status)
        for name, value in headers:
            if name.lower() not in _HOP:
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        if self.command != "HEAD":
            self.wfile.write(body)

    def _ask(
        self, method: str, target: str, body: bytes, headers: dict[str, str]
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        connection = http.client.HTTPConnection(*self.server.upstream, timeout=60)
        try:
            connection.request(method, target, body=body, headers=headers)
            response = connection.getresponse()
            return response.status, response.getheaders(), response.read()
        finally:
            connection.close()

    def _forward(self) -> None:
        body = self._body()
        target = re.sub(r"^/+", "/", self.path)
        if self.command == "POST" and target == "/token":
            self._send(200, [("Content-Type", "application/json")], _TOKEN)
            return
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
        move = _MOVE.match(target) if self.command == "POST" else None
        if move:
            # A copy and a delete (the move's generation precondition left out); the move's
            # empty body says "gzip", which the server would not decode for the copy.
            bare = {k: v for k, v in headers.items() if k.lower() not in ("content-encoding",)}
            prefix, bucket, source, destination = move.groups()
            copy = f"{prefix}{source}/copyTo/b/{bucket}/o/{destination}"
            status, answer, data = self._ask("POST", copy, b"", bare)
            if status == 200:
                self._ask("DELETE", f"{prefix}{source}", b"", bare)
                self.server.front.moves.append(f"{bucket}/{unquote(destination)}")
        else:
            status, answer, data = self._ask(self.command, target, body, headers)
        answer = [(k, _GOOGLE.sub(GOOGLE, v) if k.lower() == "location" else v) for k, v in answer]
        self._send(status, answer, data)

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = _forward


class _FrontServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, upstream: tuple[str, int], certificates: Certificates) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certificates.server, certificates.server_key)
        self.socket = context.wrap_socket(self.socket, server_side=True)
        self.upstream = upstream
        self.front = Front(("127.0.0.1", self.server_address[1]))


@contextmanager
def gcs_front(endpoint: str, certificates: Certificates) -> Iterator[Front]:
    """The front (threads of this process) of the server at ``endpoint``
    (``http://127.0.0.1:PORT``), serving HTTPS with ``certificates``, until the block ends."""
    host, port = endpoint.rsplit("/", 1)[1].rsplit(":", 1)
    server = _FrontServer((host, int(port)), certificates)
    with serving(server):
        yield server.front


def java_trust_store(certificates: Certificates, folder: Path) -> Path:
    """A PKCS12 trust store in ``folder`` with the test's authority alone (made with the JDK's
    ``keytool``; its password is ``changeit``), for ``javax.net.ssl.trustStore``."""
    store = folder / "trust-store.p12"
    store.unlink(missing_ok=True)
    keytool = shutil.which("keytool") or "keytool"
    subprocess.run(
        [
            *(keytool, "-importcert", "-noprompt", "-alias", "test-authority"),
            *("-file", str(certificates.authority), "-keystore", str(store)),
            *("-storetype", "PKCS12", "-storepass", "changeit"),
        ],
        check=True,
        capture_output=True,
    )
    return store
