"""The kills phase's tally: duplicates and lost records by key, against the source's key-0 ... key-<N-1>."""

from __future__ import annotations

from bench.kills import tally


def test_every_key_once_is_neither_duplicate_nor_lost() -> None:
    assert tally([b"key-%d" % i for i in reversed(range(1000))], 1000) == (0, 0)


def test_each_further_copy_is_a_duplicate_and_each_missing_key_is_lost() -> None:
    keys = [b"key-%d" % i for i in range(10) if i != 7] + [b"key-0", b"key-3", b"key-3"]
    assert tally(keys, 10) == (3, 1)


def test_keys_the_source_does_not_hold_count_as_duplicates() -> None:
    keys = [b"key-0", b"key-1", b"key-2", None, b"other", b"key-x", b"key-3"]
    assert tally(keys, 3) == (4, 0)
