// Background jobs from the browser: start one (the POST answers 202 with the job at once), then follow it with the
// shared poller until it has succeeded or failed.
import { ApiError, get, post, poller } from "./api.js";

const ENDED = ["succeeded", "failed"];
const POLL_MS = 500;

// Resolves with the ended job, or null once `cancelled()` is true. `onState(job)` sees every state (queued,
// running, ...). Errors of the start itself (400, 403, 503 with its reason) reject. Errors while polling are
// retried with the poller's backoff and reported through `onError(error, delayMs)` / `onRecover()`.
// A 409 means a job for the same thing is already at work: with `again` (the preview) we wait for it and start
// ours, so the answer matches the values sent; otherwise (the check) that job's outcome is the answer.
export async function runJob(url, body, { again = false, cancelled = () => false, ...hooks } = {}) {
  for (let attempt = 0; attempt < 10; attempt += 1) {
    if (cancelled()) return null;
    let job;
    try {
      job = await post(url, body);
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 409 && error.data && error.data.job)) throw error;
      const other = await follow(error.data.job, { cancelled, ...hooks });
      if (!again || other === null) return other;
      continue;
    }
    return follow(job, { cancelled, ...hooks });
  }
  throw new Error("Other jobs for the same thing kept running; try again.");
}

export function follow(
  job,
  { cancelled = () => false, onState = () => {}, onError = () => {}, onRecover = () => {} } = {},
) {
  onState(job);
  if (ENDED.includes(job.state)) return Promise.resolve(job);
  return new Promise((resolve) => {
    const loop = poller(
      async () => {
        if (cancelled()) {
          resolve(null);
          return null;
        }
        const fresh = await get(job.url);
        onState(fresh);
        if (!ENDED.includes(fresh.state)) return POLL_MS;
        resolve(fresh);
        return null;
      },
      { baseMs: 1000, maxMs: 10000, onError, onRecover },
    );
    setTimeout(loop.now, POLL_MS);
  });
}

// What a job that has not ended is doing, and for how long: a job no worker takes says so long before it expires.
export function progress(job) {
  const since = (iso) => Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  if (job.state === "queued") {
    const waited = since(job.created_at);
    return waited < 3
      ? "Queued…"
      : `Queued for ${waited} s: waiting for a worker (is one running?). It is given up at ${new Date(job.expires_at).toLocaleTimeString("en-GB")}.`;
  }
  if (job.state === "running") return `Running for ${since(job.started_at)} s…`;
  return "";
}
