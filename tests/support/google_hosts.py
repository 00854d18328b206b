"""Google's storage hosts on 127.0.0.1, for clients that have no endpoint setting and reach
``https://storage.googleapis.com`` and ``https://www.googleapis.com`` themselves (TensorFlow's
own GCS file system, through its libcurl).

`certificates` makes a certificate authority and a server certificate for the hosts; the test
server serves HTTPS with it, and the client trusts the authority (``CURL_CA_BUNDLE``).
`connect_proxy` is an HTTP proxy that tunnels ``CONNECT`` requests for the hosts (and refuses
any other) to one address, the test server's HTTPS port; the client finds it in
``HTTPS_PROXY``, as libcurl looks there. Nothing leaves the machine.
"""

from __future__ import annotations

import datetime
import socket
import socketserver
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

#: The hosts of Cloud Storage's APIs: media (object reads) and JSON (metadata, listings).
GOOGLE_HOSTS = ("storage.googleapis.com", "www.googleapis.com")


@dataclass(frozen=True)
class Certificates:
    """PEM files: the authority a client trusts, and the server's certificate and key."""

    authority: Path
    server: Path
    server_key: Path


def certificates(folder: Path, hosts: Sequence[str] = GOOGLE_HOSTS) -> Certificates:
    """Writes a certificate authority (valid a day) and a certificate it signs for ``hosts``,
    with its key, into ``folder`` (made with the ``cryptography`` package, which google-auth,
    hence gcsfs, brings)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.timezone.utc)

    def builder(
        subject: str, key: ec.EllipticCurvePrivateKey, issuer: x509.Name
    ) -> x509.CertificateBuilder:
        return (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(issuer)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=1))
        )

    ca_key, ca = ec.generate_private_key(ec.SECP256R1()), "spark-tfrecord test authority"
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, ca)])
    authority = (
        builder(ca, ca_key, ca_name)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    server = (
        builder(hosts[0], key, ca_name)
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(h) for h in hosts]), False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), False)
        .sign(ca_key, hashes.SHA256())
    )
    files = Certificates(folder / "authority.pem", folder / "server.pem", folder / "server-key.pem")
    files.authority.write_bytes(authority.public_bytes(serialization.Encoding.PEM))
    files.server.write_bytes(server.public_bytes(serialization.Encoding.PEM))
    files.server_key.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return files


@dataclass
class Proxy:
    """A running `connect_proxy`: its URL (for ``HTTPS_PROXY``), and the ``host:port`` of each
    tunnel it opened and of each request it refused, in order."""

    url: str
    tunnels: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


class _Tunnel(socketserver.StreamRequestHandler):
    disable_nagle_algorithm = True  # TCP_NODELAY, both ways: each record on as it comes
    server: _ProxyServer

    def handle(self) -> None:
        request = self.rfile.readline(8192).decode("latin-1").split()
        while self.rfile.readline(8192) not in (b"\r\n", b"\n", b""):
            pass  # the request's headers: a CONNECT has no body
        authority = request[1] if len(request) == 3 else repr(request)
        if request[:1] != ["CONNECT"] or authority.rsplit(":", 1)[0] not in self.server.hosts:
            self.server.proxy.refused.append(authority)
            self.wfile.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
            return
        with socket.create_connection(self.server.target, timeout=60) as upstream:
            upstream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.server.proxy.tunnels.append(authority)
            self.wfile.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            self.wfile.flush()
            back = threading.Thread(target=_copy, args=(upstream, self.request), daemon=True)
            back.start()
            try:
                while data := self.rfile.read1(65536):  # what the client sends: TLS records
                    upstream.sendall(data)
                upstream.shutdown(socket.SHUT_WR)
            except OSError:
                pass  # the server hung up first
            back.join(60)


def _copy(source: socket.socket, target: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            target.sendall(data)
        target.shutdown(socket.SHUT_WR)
    except OSError:
        pass  # the client hung up first


class _ProxyServer(socketserver.ThreadingTCPServer):
    daemon_threads = True

    def __init__(self, target: tuple[str, int], hosts: Sequence[str]) -> None:
        super().__init__(("127.0.0.1", 0), _Tunnel)
        self.target, self.hosts = target, tuple(hosts)
        self.proxy = Proxy(f"http://127.0.0.1:{self.server_address[1]}")


@contextmanager
def connect_proxy(target: tuple[str, int], hosts: Sequence[str] = GOOGLE_HOSTS) -> Iterator[Proxy]:
    """An HTTP proxy on a free port of 127.0.0.1 (threads of this process) that tunnels every
    ``CONNECT`` to one of ``hosts`` to ``target``, whatever port it names, and refuses other
    requests with 403, until the block ends."""
    server = _ProxyServer(target, hosts)
    with serving(server):
        yield server.proxy


@contextmanager
def serving(server: socketserver.BaseServer) -> Iterator[None]:
    """`server` answering in a thread of this process until the block ends, then closed."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
