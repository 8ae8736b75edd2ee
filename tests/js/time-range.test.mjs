import assert from "node:assert/strict";
import { test } from "node:test";

import { axisRange, customError, historyQuery, parseUtc } from "../../frontend/static/js/time-range.js";

const MINUTE = 60 * 1000;

test("parseUtc reads a date and a 24-hour time as UTC, and nothing else", () => {
  assert.equal(parseUtc("2026-11-29", "14:05"), Date.UTC(2026, 10, 29, 14, 5));
  assert.equal(parseUtc("2026-11-29", "00:00"), Date.UTC(2026, 10, 29, 0, 0));
  assert.equal(parseUtc("2026-11-29", "2:05 PM"), null);
  assert.equal(parseUtc("2026-11-29", "24:00"), null);
  assert.equal(parseUtc("2026-02-30", "10:00"), null);
  assert.equal(parseUtc("29/11/2026", "10:00"), null);
  assert.equal(parseUtc("", ""), null);
});

test("customError names what is wrong with a window", () => {
  const at = Date.UTC(2026, 10, 29, 10, 0);
  assert.match(customError(null, at), /^From:/);
  assert.match(customError(at, null), /^To:/);
  assert.equal(customError(at, at), "To must be after From.");
  assert.equal(customError(at, at + 25 * 60 * MINUTE), "At most 24 hours at once.");
  assert.equal(customError(at, at + 24 * 60 * MINUTE), "");
});

test("historyQuery asks for the last minutes or for since and until in ISO 8601", () => {
  assert.equal(historyQuery({ minutes: 360 }), "minutes=360");
  const since = Date.UTC(2026, 10, 29, 10, 0);
  assert.equal(
    historyQuery({ since, until: since + 90 * MINUTE }),
    "since=2026-11-29T10:00:00Z&until=2026-11-29T11:30:00Z",
  );
});

test("axisRange: a custom window as given; the last minutes from the first sample, at least a minute back", () => {
  const now = Date.UTC(2026, 10, 29, 12, 0);
  const since = now - 120 * MINUTE;
  assert.deepEqual(
    axisRange({ since, until: now }, []).map((d) => d.getTime()),
    [since, now],
  );
  const sample = (minutesAgo) => ({ at: new Date(now - minutesAgo * MINUTE).toISOString() });
  assert.equal(axisRange({ minutes: 60 }, [sample(20)], now)[0].getTime(), now - 20 * MINUTE);
  assert.equal(axisRange({ minutes: 60 }, [sample(90)], now)[0].getTime(), now - 60 * MINUTE);
  assert.equal(axisRange({ minutes: 60 }, [], now)[0].getTime(), now - MINUTE);
});
