// A chart's time range: the last 15 minutes to 24 hours, or a custom window typed on a 24-hour clock in UTC. The
// pure part (parsing, the query, the axis range) is unit-tested (tests/js/time-range.test.mjs); picker() wires a
// <select> and a custom form to a callback.
export const MAX_MINUTES = 24 * 60; // what the server keeps of a flow's samples
export const RANGES = [
  { value: "15", label: "last 15 min" },
  { value: "30", label: "last 30 min" },
  { value: "60", label: "last 1 h" },
  { value: "360", label: "last 6 h" },
  { value: "1440", label: "last 24 h" },
  { value: "custom", label: "custom (UTC)" },
];
const MINUTE = 60 * 1000;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME = /^([01]\d|2[0-3]):([0-5]\d)$/;

// "2026-11-29" and "14:05" (24-hour) as epoch ms in UTC; null when either does not parse.
export function parseUtc(date, time) {
  const d = DATE.exec(date ?? ""),
    t = TIME.exec(time ?? "");
  if (!d || !t) return null;
  const ms = Date.UTC(Number(d[1]), Number(d[2]) - 1, Number(d[3]), Number(t[1]), Number(t[2]));
  const back = new Date(ms);
  return back.getUTCDate() === Number(d[3]) && back.getUTCMonth() === Number(d[2]) - 1 ? ms : null;
}

// Why a custom window cannot be shown, or "" when it can.
export function customError(sinceMs, untilMs, maxMinutes = MAX_MINUTES) {
  if (sinceMs === null) return "From: give a date and a 24-hour time, e.g. 2026-11-29 and 14:05.";
  if (untilMs === null) return "To: give a date and a 24-hour time, e.g. 2026-11-29 and 15:05.";
  if (untilMs <= sinceMs) return "To must be after From.";
  if (untilMs - sinceMs > maxMinutes * MINUTE) return `At most ${maxMinutes / 60} hours at once.`;
  return "";
}

// The history API's query for a window: {minutes} or {since, until} (epoch ms).
export function historyQuery(window) {
  if (window.minutes) return `minutes=${window.minutes}`;
  const iso = (ms) => new Date(ms).toISOString().replace(".000Z", "Z");
  return `since=${iso(window.since)}&until=${iso(window.until)}`;
}

// The x-axis range: a custom window as given; the last N minutes from the first sample in them (at least one
// minute back) to now, so a new flow fills the chart.
export function axisRange(window, samples, now = Date.now()) {
  if (!window.minutes) return [new Date(window.since), new Date(window.until)];
  const first = samples.length ? Date.parse(samples[0].at) : now;
  return [new Date(Math.min(Math.max(first, now - window.minutes * MINUTE), now - MINUTE)), new Date(now)];
}

// Binds the picker's elements (ids: <prefix>-select, -custom, -from-date, -from-time, -to-date, -to-time, -show,
// -note) and calls onChange(window) when the user picks a range. Returns the window to start with.
export function picker(prefix, onChange, initial = 30) {
  const el = (suffix) => document.getElementById(`${prefix}-${suffix}`);
  const select = el("select"),
    custom = el("custom"),
    note = el("note");
  for (const range of RANGES) {
    const option = document.createElement("option");
    option.value = range.value;
    option.textContent = range.label;
    option.selected = range.value === String(initial);
    select.append(option);
  }
  select.addEventListener("change", () => {
    const isCustom = select.value === "custom";
    custom.hidden = !isCustom;
    note.textContent = "";
    if (!isCustom) onChange({ minutes: Number(select.value) });
  });
  el("show").addEventListener("click", (event) => {
    event.preventDefault();
    const since = parseUtc(el("from-date").value.trim(), el("from-time").value.trim());
    const until = parseUtc(el("to-date").value.trim(), el("to-time").value.trim());
    const error = customError(since, until);
    note.textContent = error;
    if (!error) onChange({ since, until });
  });
  return { minutes: initial };
}
