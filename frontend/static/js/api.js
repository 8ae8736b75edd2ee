// The REST API from the browser: session cookie plus the CSRF token, JSON in and out.

export class ApiError extends Error {
  constructor(status, data) {
    super(ApiError.summary(status, data));
    this.status = status;
    this.data = data;
  }

  static summary(status, data) {
    if (data && typeof data === "object" && typeof data.detail === "string") return data.detail;
    if (status === 403) return "Your role does not allow this.";
    return `Request failed (${status}).`;
  }
}

// A refusal as one line: the API's `detail`, or each field named with its reasons.
export function problem(error) {
  const data = error.data;
  if (data && typeof data === "object" && !data.detail) {
    return Object.entries(data)
      .map(([field, reasons]) => `${field}: ${[].concat(reasons).join(" ")}`)
      .join("; ");
  }
  return error.message;
}

function csrfToken() {
  const meta = document.querySelector('meta[name="csrf-token"]');
  return meta ? meta.content : "";
}

export async function api(method, url, body = undefined, { text = false } = {}) {
  const headers = { Accept: "application/json" };
  const init = { method, headers, credentials: "same-origin" };
  if (method !== "GET") headers["X-CSRFToken"] = csrfToken();
  if (body !== undefined) {
    headers["Content-Type"] = text ? "text/plain" : "application/json";
    init.body = text ? body : JSON.stringify(body);
  }
  const response = await fetch(url, init);
  const type = response.headers.get("Content-Type") || "";
  const data = type.includes("json") ? await response.json() : await response.text();
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

export const get = (url) => api("GET", url);

// Answers can arrive out of order (a search typed while an earlier query's request is in flight). A page makes one
// `latest()` per list it fills; each load calls it and gets `current()`, which stays true until a later load begins,
// so an older answer that arrives last is dropped instead of replacing the newer one.
export function latest() {
  let generation = 0;
  return () => {
    const mine = ++generation;
    return () => mine === generation;
  };
}
export const post = (url, body) => api("POST", url, body === undefined ? {} : body);

// A poll loop that survives errors. `tick` returns the delay in ms before the next tick, or null to stop. A tick
// that throws is retried with exponential backoff (baseMs doubled per failure, at most maxMs): `onError(error,
// delayMs)` reports it, and `onRecover()` runs on the first success after a failure. `now()` ticks at once.
export function poller(tick, { baseMs = 2000, maxMs = 30000, onError = () => {}, onRecover = () => {} } = {}) {
  let timer = null;
  let failures = 0;
  let running = false;
  let again = false;
  async function loop() {
    clearTimeout(timer);
    timer = null;
    if (running) {
      again = true;
      return;
    }
    running = true;
    let delay = null;
    try {
      delay = await tick();
      if (failures) onRecover();
      failures = 0;
    } catch (error) {
      failures += 1;
      delay = Math.min(maxMs, baseMs * 2 ** (failures - 1));
      onError(error, delay);
    } finally {
      running = false;
    }
    if (again) {
      again = false;
      delay = 0;
    }
    if (delay !== null && delay !== undefined) timer = setTimeout(loop, delay);
  }
  return {
    now: loop,
    stop() {
      clearTimeout(timer);
      timer = null;
    },
  };
}
