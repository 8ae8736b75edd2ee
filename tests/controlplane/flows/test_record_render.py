"""How record bytes are shown: text, pretty JSON, hex, cut at the limit with the size stated, or sizes only."""

from __future__ import annotations

from controlplane.flows.recordrender import SHOWN_LIMIT, headers_rendered, rendered


def test_json_is_pretty_printed_and_falls_back_to_text_when_it_does_not_parse() -> None:
    assert rendered(b'{"a":[1,2]}', "json", True) == {
        "size": 11,
        "format": "json",
        "shown": '{\n  "a": [\n    1,\n    2\n  ]\n}',
        "truncated": False,
    }
    assert rendered(b"{not json", "json", True) == {
        "size": 9,
        "format": "text",
        "shown": "{not json",
        "truncated": False,
    }


def test_bytes_that_are_not_utf8_are_shown_as_hex() -> None:
    assert rendered(b"\xff\x00a", "text", True) == {"size": 3, "format": "hex", "shown": "ff 00 61", "truncated": False}


def test_a_long_value_is_cut_at_the_limit_and_its_full_size_stated() -> None:
    text = rendered(b"x" * 10_000, "text", True)
    assert text is not None and (len(text["shown"]), text["size"], text["truncated"]) == (SHOWN_LIMIT, 10_000, True)
    hexed = rendered(bytes(10_000), "hex", True)
    assert hexed is not None and hexed["truncated"] and len(hexed["shown"]) <= SHOWN_LIMIT
    whole = rendered(bytes(1365), "hex", True)
    assert whole is not None and not whole["truncated"] and len(whole["shown"]) == 1365 * 3 - 1


def test_without_contents_only_sizes_and_header_names_are_given() -> None:
    assert rendered(b"secret", "text", False) == {"size": 6, "format": None, "shown": None, "truncated": False}
    assert rendered(None, "text", True) is None
    assert headers_rendered([("trace", b"t-1"), ("none", None)], "text", False) == [
        {"name": "trace", "value": {"size": 3, "format": None, "shown": None, "truncated": False}},
        {"name": "none", "value": None},
    ]
