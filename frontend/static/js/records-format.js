// The Records page's pure helpers (no DOM): times in and out, sizes, and a copy's whereabouts in words.

const pad = (n, width = 2) => String(n).padStart(width, "0");

// Local time, 24-hour, to the millisecond: "2026-11-29 13:05:01.123" (the time input reads the same form).
export function stamp(ms) {
  if (ms === null || ms === undefined) return "–";
  const d = new Date(ms);
  const day = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
  return `${day} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

// "2026-11-29 13:05" or "2026-11-29 13:05:30" in local time (24-hour), as epoch ms; null when it is not that form
// or not a real time ("2026-02-30 10:00", "24:00").
export function parseTime(text) {
  const m = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2}))?$/.exec(text.trim());
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1).map((part) => Number(part || 0));
  if (h > 23 || mi > 59 || s > 59) return null;
  const date = new Date(y, mo - 1, d, h, mi, s);
  return date.getMonth() === mo - 1 && date.getDate() === d ? date.getTime() : null;
}

export function bytes(size) {
  return size === 1 ? "1 byte" : `${size.toLocaleString("en-US")} bytes`;
}

// What the Copy column says first: where the copy is when it is known, else the status and the range it lies in.
export function matchText(match) {
  if (match.target_offset !== null && ["exact", "matched"].includes(match.status)) {
    return `${match.status} at target offset ${match.target_offset}`;
  }
  const span = match.target_range ? ` (target offsets ${match.target_range[0]}..${match.target_range[1]})` : "";
  return `${match.status.replaceAll("_", " ")}${span}`;
}
