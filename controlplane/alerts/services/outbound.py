"""Outbound HTTP only where intended: a webhook's host must resolve to public addresses, and the request goes to
the very address that was checked.

Every address the host resolves to is checked (getaddrinfo, so ``2130706433``, ``0x7f000001`` and ``0177.0.0.1``
are the ``127.0.0.1`` they stand for); one loopback, link-local, private, multicast, reserved, unspecified or
otherwise non-global address refuses the host, and so does an IPv6 address that embeds one (IPv4-mapped,
IPv4-compatible, 6to4, Teredo). A host named in ``MIRRORPLANE_WEBHOOK_ALLOWED_HOSTS`` skips the check. The
connection is made to the checked address itself, with the URL's host in the Host header and TLS SNI, so a DNS
answer that changes between check and connect (rebinding) is never used. Redirects are not followed.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
from socket import getaddrinfo
from urllib.parse import urlsplit

from django.conf import settings

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
ALLOW_SETTING = "MIRRORPLANE_WEBHOOK_ALLOWED_HOSTS"
_KINDS = (  # the most telling name first: 240.0.0.1 is both reserved and (to ipaddress) private
    ("an unspecified", "is_unspecified"),
    ("a loopback", "is_loopback"),
    ("a link-local", "is_link_local"),
    ("a multicast", "is_multicast"),
    ("a reserved", "is_reserved"),
    ("a private", "is_private"),
)


class RefusedHost(ValueError):
    """Why a URL's host may not be contacted; the message names the host and the address."""


def refusal(address: IPAddress) -> str | None:
    """What this address is ("a loopback address"), if outbound requests never reach it; None for a public one."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            reason = refusal(embedded)
            return f"an IPv6 address embedding {embedded}, {reason}" if reason else None
    for kind, flag in _KINDS:
        if getattr(address, flag):
            return f"{kind} address"
    return None if address.is_global else "a non-global address"


def allowed_hosts() -> frozenset[str]:
    return frozenset(h.lower().strip("[]") for h in settings.MIRRORPLANE_WEBHOOK_ALLOWED_HOSTS)


def vetted_addresses(host: str, port: int) -> list[str]:
    """The addresses of ``host`` that a request may go to, in getaddrinfo's order: all of them, or RefusedHost if
    one is refused (and the host is not allow-listed) or the host does not resolve."""
    try:
        infos = getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise RefusedHost(f"{host!r} does not resolve ({exc})") from None
    addresses = list(dict.fromkeys(str(info[4][0]).partition("%")[0] for info in infos))
    if host.lower() in allowed_hosts():
        return addresses
    for text in addresses:
        reason = refusal(ipaddress.ip_address(text))
        if reason is not None:
            raise RefusedHost(f"{host!r} resolves to {text}, {reason} (an admin can allow the host in {ALLOW_SETTING})")
    return addresses


def check_url(url: str) -> None:
    """RefusedHost unless the URL's host may be contacted (see vetted_addresses)."""
    parts = urlsplit(url)
    vetted_addresses(parts.hostname or "", parts.port or _default_port(parts.scheme))


def post(url: str, body: bytes, headers: dict[str, str], timeout: float) -> http.client.HTTPResponse:
    """POST to the URL through a connection to a vetted address; the response is returned unread and unfollowed.
    RefusedHost if the host may not be contacted, OSError if no vetted address accepts the connection."""
    parts = urlsplit(url)
    host, port = parts.hostname or "", parts.port or _default_port(parts.scheme)
    addresses = vetted_addresses(host, port)
    connection: http.client.HTTPConnection
    if parts.scheme == "https":
        connection = _PinnedHTTPSConnection(addresses, host, port, timeout)
    else:
        connection = _PinnedHTTPConnection(addresses, host, port, timeout)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    connection.request("POST", target, body=body, headers=headers)
    return connection.getresponse()


def _default_port(scheme: str) -> int:
    return 443 if scheme == "https" else 80


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if int(address) >> 32 == 0 and int(address) > 1:  # IPv4-compatible ::a.b.c.d (not :: nor ::1)
        return ipaddress.IPv4Address(int(address))
    return None


def _connect(addresses: list[str], port: int, timeout: float | None) -> socket.socket:
    """A TCP connection to the first of the vetted addresses that accepts one; never a fresh name lookup."""
    error: OSError = OSError("no address to connect to")
    for address in addresses:
        try:
            return socket.create_connection((address, port), timeout)
        except OSError as exc:
            error = exc
    raise error


class _PinnedHTTPConnection(http.client.HTTPConnection):
    """An HTTP connection to one of ``addresses``; ``host`` is only what the Host header says."""

    def __init__(self, addresses: list[str], host: str, port: int, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self.addresses = addresses

    def connect(self) -> None:
        self.sock = _connect(self.addresses, self.port, self.timeout)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """An HTTPS connection to one of ``addresses``, verifying the certificate of ``host`` (SNI and Host header)."""

    def __init__(self, addresses: list[str], host: str, port: int, timeout: float) -> None:
        self.tls = ssl.create_default_context()
        super().__init__(host, port, timeout=timeout, context=self.tls)
        self.addresses = addresses

    def connect(self) -> None:
        self.sock = self.tls.wrap_socket(_connect(self.addresses, self.port, self.timeout), server_hostname=self.host)
