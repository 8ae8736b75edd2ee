"""Host names as a cluster's `bootstrap.servers` and the control plane's webhook URLs name them: RFC 1123 names
(letters, digits and hyphens in dot-separated labels) or IP address literals, nothing else. librdkafka would take
any text as a host and only fail to resolve it later; refusing it up front keeps markup and typos out of stored
settings. The one rule for every path: the cluster API and the MM2 import (control plane), and the MM2
properties file of the standalone runner.
"""

from __future__ import annotations

import ipaddress
import re

MAX_HOST_LENGTH = 253  # RFC 1035's limit on a name's text form, which RFC 1123 keeps
_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?", re.ASCII)
_PORT = re.compile(r"[0-9]{1,5}", re.ASCII)  # ASCII digits only: str.isdigit() also accepts "١٢٣"
_NAME_RULE = "letters, digits and hyphens in dot-separated labels of 1 to 63, no hyphen first or last"
EXAMPLE = "expected e.g. kafka1:9092,10.0.0.2:9092,[::1]:9092"


class HostError(ValueError):
    """Why a host, or a host:port, is refused; the message names the value."""


def validate_host(host: str) -> None:
    """An RFC 1123 host name, or an IPv4 or IPv6 address (IPv6 without brackets, as a URL's parsed host is)."""
    if ":" in host:
        _ip(host, 6)
        return
    labels = host.split(".")
    if len(host) > MAX_HOST_LENGTH or not all(_LABEL.fullmatch(label) for label in labels):
        raise HostError(f"{host!r} is not a host name ({_NAME_RULE}) or an IP address")
    if labels[-1].isdigit():  # RFC 1123 2.1: a name never looks like dotted decimal, so this must be an address
        _ip(host, 4)


def validate_server(server: str) -> None:
    """One entry of `bootstrap.servers`: host:port, an IPv6 address in brackets ([::1]:9092)."""
    host, sep, port = server.rpartition(":")
    if not sep or not host:
        raise HostError(f"{server!r} is not host:port ({EXAMPLE})")
    if _PORT.fullmatch(port) is None or not 0 < int(port) < 65536:
        raise HostError(f"{server!r}: the port is not a number from 1 to 65535")
    bracketed = host.startswith("[") and host.endswith("]")
    if ":" in host and not bracketed:
        raise HostError(f"{server!r}: an IPv6 address is written in brackets ({EXAMPLE})")
    try:
        if bracketed:
            _ip(host[1:-1], 6)
        else:
            validate_host(host)
    except HostError as exc:
        raise HostError(f"{server!r}: {exc}") from None


def validate_bootstrap_servers(value: str) -> None:
    """librdkafka's `bootstrap.servers`: comma-separated host:port entries (spaces around an entry are allowed)."""
    for server in value.split(","):
        validate_server(server.strip())


def _ip(text: str, version: int) -> None:
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        address = None
    if address is None or address.version != version:
        raise HostError(f"{text!r} is not an IPv{version} address")
