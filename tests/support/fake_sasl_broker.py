"""A fake Kafka broker that speaks just enough of the protocol to make a librdkafka client authenticate with
SASL/PLAIN, and records every byte clients send it. Tests use it as a host an attacker controls: whatever
credentials a client sends there show up in ``received()``.

It answers ApiVersions (KIP-511: a flexible-version request gets UNSUPPORTED_VERSION and the versions it
speaks, so the client retries with v0), SaslHandshake v1 (PLAIN offered) and SaslAuthenticate v0 (always
refused, so the client stops there). Anything else closes the connection.
"""

from __future__ import annotations

import socket
import socketserver
import struct
import threading
from types import TracebackType

API_VERSIONS, SASL_HANDSHAKE, SASL_AUTHENTICATE = 18, 17, 36
UNSUPPORTED_VERSION, SASL_AUTHENTICATION_FAILED = 35, 58
_SUPPORTED = ((API_VERSIONS, 0, 0), (SASL_HANDSHAKE, 0, 1), (SASL_AUTHENTICATE, 0, 0))


class FakeSaslBroker:
    """Listens on 127.0.0.1 on a free port while in a ``with`` block; ``bootstrap`` is its host:port."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._received = bytearray()
        self.authentications = 0  # SaslAuthenticate requests seen
        broker = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                broker._serve(self.request)

        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def bootstrap(self) -> str:
        host, port = self._server.server_address[:2]
        return f"{host}:{port}"

    def received(self) -> bytes:
        """Every byte every client has sent so far."""
        with self._lock:
            return bytes(self._received)

    def __enter__(self) -> FakeSaslBroker:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(10)
        try:
            while (frame := self._read_frame(conn)) is not None:
                response = self._answer(frame)
                if response is None:
                    return
                conn.sendall(struct.pack(">i", len(response)) + response)
        except OSError:
            return

    def _read_frame(self, conn: socket.socket) -> bytes | None:
        size = self._read_exactly(conn, 4)
        if size is None:
            return None
        return self._read_exactly(conn, struct.unpack(">i", size)[0])

    def _read_exactly(self, conn: socket.socket, count: int) -> bytes | None:
        data = bytearray()
        while len(data) < count:
            chunk = conn.recv(count - len(data))
            if not chunk:
                return None
            data += chunk
            with self._lock:
                self._received += chunk
        return bytes(data)

    def _answer(self, frame: bytes) -> bytes | None:
        api_key, version, correlation_id = struct.unpack(">hhi", frame[:8])
        header = struct.pack(">i", correlation_id)
        if api_key == API_VERSIONS:
            error = UNSUPPORTED_VERSION if version > 0 else 0
            entries = b"".join(struct.pack(">hhh", *entry) for entry in _SUPPORTED)
            return header + struct.pack(">hi", error, len(_SUPPORTED)) + entries
        if api_key == SASL_HANDSHAKE:
            return header + struct.pack(">hih", 0, 1, 5) + b"PLAIN"
        if api_key == SASL_AUTHENTICATE:
            with self._lock:
                self.authentications += 1
            message = b"refused by the fake broker"
            return header + struct.pack(">hh", SASL_AUTHENTICATION_FAILED, len(message)) + message + b"\0\0\0\0"
        return None
