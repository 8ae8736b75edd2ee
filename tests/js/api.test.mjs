// api.js's pure parts: latest() drops answers that a later load overtook, the poller backs off and recovers.
import assert from "node:assert/strict";
import { mock, test } from "node:test";

import { latest, poller } from "../../frontend/static/js/api.js";

test("only the latest load's answer is current", () => {
  const begin = latest();
  const first = begin();
  assert.equal(first(), true);
  const second = begin();
  assert.deepEqual([first(), second()], [false, true]);
  const other = latest()(); // another list's loads do not count
  assert.deepEqual([second(), other()], [true, true]);
});

test("a failing tick is retried with a doubling delay up to the ceiling, and a success says it recovered", async () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  try {
    const delays = [];
    let recovered = 0;
    let calls = 0;
    const loop = poller(
      async () => {
        calls += 1;
        if (calls <= 4) throw new Error("down");
        return null;
      },
      { baseMs: 100, maxMs: 500, onError: (error, delay) => delays.push(delay), onRecover: () => (recovered += 1) },
    );
    await loop.now();
    for (const delay of [100, 200, 400, 500]) {
      mock.timers.tick(delay);
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.deepEqual(delays, [100, 200, 400, 500]);
    assert.deepEqual([calls, recovered], [5, 1]);
  } finally {
    mock.timers.reset();
  }
});
