"""The outbound guard: every address a host resolves to is checked, in whatever form the host wrote it, and an
IPv6 address is judged by the IPv4 address it embeds."""

from __future__ import annotations

import ipaddress

import pytest
from django.test import override_settings

from controlplane.alerts.services import outbound


@pytest.mark.parametrize("host", ["2130706433", "0x7f000001", "0177.0.0.1", "127.1", "0x7f.1"])
def test_integer_hex_and_octal_forms_of_a_loopback_address_are_refused_as_the_address_they_stand_for(
    host: str,
) -> None:
    with pytest.raises(outbound.RefusedHost, match=r"resolves to 127\.0\.0\.1, a loopback address"):
        outbound.vetted_addresses(host, 80)


def test_an_allow_listed_host_gets_its_addresses_as_resolved() -> None:
    with override_settings(MIRRORPLANE_WEBHOOK_ALLOWED_HOSTS=["2130706433"]):
        assert outbound.vetted_addresses("2130706433", 80) == ["127.0.0.1"]


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("::ffff:169.254.169.254", "an IPv6 address embedding 169.254.169.254, a link-local address"),
        ("::10.0.0.1", "an IPv6 address embedding 10.0.0.1, a private address"),
        ("2002:a00:1::", "an IPv6 address embedding 10.0.0.1, a private address"),
        ("2001:0:4136:e378:8000:63bf:f5ff:fffe", "an IPv6 address embedding 10.0.0.1, a private address"),
        ("fe80::1", "a link-local address"),
        ("ff02::1", "a multicast address"),
        ("::", "an unspecified address"),
        ("93.184.215.14", None),
        ("::ffff:93.184.215.14", None),
        ("2606:2800:21f:cb07:6820:80da:af6b:8b2c", None),
    ],
)
def test_each_address_is_judged_by_what_it_reaches(address: str, reason: str | None) -> None:
    assert outbound.refusal(ipaddress.ip_address(address)) == reason
