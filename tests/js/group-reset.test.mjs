// group-reset.js's pure parts: the form's values as the API's body, a UTC time of day read as 24-hour; and api.js's
// problem(), the line the form shows for a refusal.
import assert from "node:assert/strict";
import { test } from "node:test";

import { problem } from "../../frontend/static/js/api.js";
import { resetBody, utcInstant } from "../../frontend/static/js/group-reset.js";

test("a typed time is UTC and 24-hour; other text goes to the API as typed", () => {
  assert.equal(utcInstant("2026-11-28 13:05"), "2026-11-28T13:05:00Z");
  assert.equal(utcInstant(" 2026-11-28T23:59:30 "), "2026-11-28T23:59:30Z");
  assert.equal(utcInstant("1:05 PM"), "1:05 PM");
});

test("the body holds only what the mode needs, a partition only with its topic", () => {
  assert.deepEqual(resetBody({ to: "earliest", partition: "2", offset: "7" }), { to: "earliest" });
  assert.deepEqual(resetBody({ to: "offset", topic: " orders ", partition: "0", offset: "4" }), {
    to: "offset",
    topic: "orders",
    partition: 0,
    offset: 4,
  });
  assert.deepEqual(resetBody({ to: "timestamp", topic: "orders", timestamp: "2026-11-28 13:05" }), {
    to: "timestamp",
    topic: "orders",
    timestamp: "2026-11-28T13:05:00Z",
  });
  assert.deepEqual(resetBody({ to: "offset", offset: "" }), { to: "offset", offset: null });
});

test("a refusal reads as the API's detail or its fields and reasons", () => {
  assert.equal(problem({ message: "x", data: { detail: "billing has 1 member" } }), "x");
  assert.equal(
    problem({ message: "x", data: { offset: ["11 is outside the log."] } }),
    "offset: 11 is outside the log.",
  );
});
