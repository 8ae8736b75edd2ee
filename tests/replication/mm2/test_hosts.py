"""Bootstrap servers and URL hosts are RFC 1123 names or IP literals; a refusal names the value and the reason."""

from __future__ import annotations

import pytest

from replication.config import ConfigError
from replication.config.mm2properties import load_flows
from replication.mm2.hosts import HostError, validate_bootstrap_servers, validate_host
from replication.mm2.properties import parse_properties

VALID_SERVERS = [
    "localhost:9092",
    "127.0.0.1:19092",
    "kafka-1.us-west.example.com:9092",
    "a:1,b.example:65535",
    "[::1]:9092",
    "[2001:db8::17]:9093, broker-2:9092",
    "KAFKA1:9092",
]
BAD_SERVERS = {
    "<b/id=x>:9092": "is not a host name",
    "kafka_1:9092": "is not a host name",
    "-kafka:9092": "is not a host name",
    "kafka-:9092": "is not a host name",
    "kafka..example:9092": "is not a host name",
    "kafka.example.:9092": "is not a host name",
    f"{'a' * 64}.example:9092": "is not a host name",
    "kafka\u00e9.example:9092": "is not a host name",
    "h ost:9092": "is not a host name",
    "999.0.0.1:9092": "is not an IPv4 address",
    "::1:9092": "an IPv6 address is written in brackets",
    "[kafka]:9092": "is not an IPv6 address",
    "[127.0.0.1]:9092": "is not an IPv6 address",
    "kafka:0": "the port is not a number from 1 to 65535",
    "kafka:١٢٣": "the port is not a number from 1 to 65535",
    "kafka": "is not host:port",
    "a:1,": "is not host:port",
}


@pytest.mark.parametrize("servers", VALID_SERVERS)
def test_names_ip_addresses_and_bracketed_ipv6_are_accepted(servers: str) -> None:
    validate_bootstrap_servers(servers)


@pytest.mark.parametrize(("servers", "reason"), BAD_SERVERS.items())
def test_anything_else_is_refused_with_the_reason(servers: str, reason: str) -> None:
    with pytest.raises(HostError, match=reason):
        validate_bootstrap_servers(servers)


@pytest.mark.parametrize("host", ["hooks.example.com", "10.0.0.7", "::1", "fe80::1"])
def test_a_url_host_is_a_name_or_an_address_without_brackets(host: str) -> None:
    validate_host(host)


@pytest.mark.parametrize("host", ["<b>", "evil.example/x", "a b", "", "hooks.example.com."])
def test_a_url_host_with_anything_else_is_refused(host: str) -> None:
    with pytest.raises(HostError, match="is not a host name"):
        validate_host(host)


def test_an_mm2_file_with_a_bad_bootstrap_server_is_refused_naming_the_property() -> None:
    text = "clusters = a, b\na.bootstrap.servers = <b/id=x>:9092\nb.bootstrap.servers = [::1]:9092\n"
    text += "a->b.enabled = true\n"

    with pytest.raises(ConfigError) as raised:
        load_flows(parse_properties(text))

    assert raised.value.property_name == "a.bootstrap.servers"
    assert "'<b/id=x>' is not a host name" in raised.value.reason
