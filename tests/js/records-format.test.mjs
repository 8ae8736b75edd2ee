// records-format.js: 24-hour local times in and out, sizes, and the Copy column's words.
import assert from "node:assert/strict";
import { test } from "node:test";

import { bytes, matchText, parseTime, stamp } from "../../frontend/static/js/records-format.js";

test("a time is read and written 24-hour in local time, to the millisecond", () => {
  const ms = new Date(2026, 10, 29, 13, 5, 1, 123).getTime();
  assert.equal(stamp(ms), "2026-11-29 13:05:01.123");
  assert.equal(parseTime("2026-11-29 13:05:01"), ms - 123);
  assert.equal(parseTime(" 2026-11-29 13:05 "), new Date(2026, 10, 29, 13, 5).getTime());
  assert.equal(stamp(null), "–");
});

test("a time that is not one is refused", () => {
  for (const text of ["2026-11-29 1:05 PM", "2026-11-29 24:00", "2026-02-30 10:00", "13:05", ""]) {
    assert.equal(parseTime(text), null, text);
  }
});

test("sizes and a copy's whereabouts read as words", () => {
  assert.deepEqual([bytes(1), bytes(4096)], ["1 byte", "4,096 bytes"]);
  assert.equal(matchText({ status: "exact", target_offset: 7, target_range: null }), "exact at target offset 7");
  assert.equal(
    matchText({ status: "range", target_offset: null, target_range: [6, 12] }),
    "range (target offsets 6..12)",
  );
  assert.equal(matchText({ status: "not_replicated", target_offset: null, target_range: null }), "not replicated");
});
