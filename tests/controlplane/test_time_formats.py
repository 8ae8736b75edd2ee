"""Server-rendered times use the 24-hour clock, as the pages' scripts do."""

from __future__ import annotations

from datetime import UTC, datetime

from django.utils import formats


def test_datetimes_render_on_a_24_hour_clock() -> None:
    moment = datetime(2026, 11, 29, 15, 5, 9, tzinfo=UTC)
    assert formats.date_format(moment, "DATETIME_FORMAT") == "29 Nov 2026, 15:05:09"
    assert formats.date_format(moment, "SHORT_DATETIME_FORMAT") == "2026-11-29 15:05"
    assert formats.time_format(moment.time()) == "15:05:09"
