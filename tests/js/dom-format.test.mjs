// dom.js's formatting functions: figures and times as every page shows them.
import assert from "node:assert/strict";
import { test } from "node:test";

import { age, ageOfMillis, clock, compact, ms, number, when } from "../../frontend/static/js/dom.js";

test("numbers are grouped, a missing one is a dash", () => {
  assert.equal(number(1234567), "1,234,567");
  assert.equal(number(3.14159, 2), "3.14");
  assert.equal(number(null), "–");
  assert.equal(number(undefined), "–");
});

test("compact figures use k and M past ten thousand", () => {
  assert.deepEqual(
    [compact(2.25), compact(950), compact(12345), compact(2500000), compact(null)],
    ["2.3", "950", "12.3k", "2.5M", "–"],
  );
});

test("durations in ms turn into seconds from one second", () => {
  assert.deepEqual([ms(12.4), ms(999), ms(1500), ms(null)], ["12 ms", "999 ms", "1.5 s", "–"]);
});

test("ages read in seconds, minutes or hours", () => {
  assert.deepEqual([age(42), age(600), age(5400), age(null)], ["42 s", "10 min", "1.5 h", "–"]);
  assert.equal(ageOfMillis(null), null);
  assert.equal(ageOfMillis(Date.now() + 60000), 0); // a clock ahead of ours is no negative age
});

test("times of day are 24-hour", () => {
  const afternoon = new Date(2026, 10, 24, 13, 5);
  assert.equal(clock(afternoon), "13:05");
  assert.equal(when(""), "–");
  assert.match(when(afternoon.toISOString()), /^24 Nov 2026, 13:05:00$/);
});
