// The wizard's step panels: each takes the failover (as the API returns it) and `run(step, inputs)`.
// `f.steps.<step>` is absent until the step has run; once there, its `result` has every field of the step's schema
// (PreflightResult, DrainResult, ... in /api/schema/), so a panel asks "has it run?" and then reads named fields.
import { age, alert, badge, compact, el, ms, number, table } from "./dom.js";

const button = (text, onclick, primary = true) =>
  el("button", { class: `btn ${primary ? "primary" : ""}`, type: "button", onclick }, text);

function checks(rows, { ack = [] } = {}) {
  return el(
    "div",
    { class: "checks" },
    rows.map((c) =>
      el(
        "div",
        { class: "pfcheck", "data-check": c.code },
        badge(c.status, c.status === "warn" ? "warning" : c.status),
        el("div", {}, el("div", { class: "what" }, c.label), el("div", { class: "detail" }, c.detail)),
        c.status === "warn" && ack !== null
          ? el(
              "label",
              { class: "ack" },
              el("input", { type: "checkbox", name: "ack", value: c.code, checked: ack.includes(c.code) }),
              "Acknowledge",
            )
          : el("span"),
      ),
    ),
  );
}

function rpo(r) {
  if (r.records === null) return "unknown (no lag reported)";
  const at = r.as_of ? `, lag reported ${new Date(r.as_of).toLocaleTimeString("en-GB")}` : "";
  const window = r.latency_p99_ms ? `; writes of the last ${ms(r.latency_p99_ms)} (p99 replication latency)` : "";
  return `up to ${number(r.records)} records${at}${window}${r.note ? `: ${r.note}` : ""}`;
}

function errorOf(r) {
  return r.error ? alert("error", r.error) : null;
}

export function plan(f) {
  return [
    el(
      "dl",
      { class: "kv" },
      el("dt", {}, "Groups"),
      el("dd", { class: "mono" }, f.groups.join(", ")),
      el("dt", {}, "From → to"),
      el("dd", {}, `${f.source} → ${f.target}`),
      el("dt", {}, "Mode"),
      el("dd", {}, f.mode + (f.dry_run ? " (dry run: nothing is changed)" : "")),
      el("dt", {}, "Drain threshold"),
      el("dd", {}, `${number(f.drain_threshold)} records`),
    ),
  ];
}

export function preflight(f, run, operator) {
  const ran = f.steps.preflight;
  const acked = ran ? ran.inputs.acknowledge : [];
  const body = [
    el(
      "p",
      { class: "muted" },
      "The flow is healthy, heartbeats are fresh, checkpoints exist, the target groups are EMPTY, the ACLs exist. Failed checks block; warnings need an acknowledgement.",
    ),
  ];
  if (ran) {
    const r = ran.result;
    body.push(checks(r.checks, { ack: operator ? acked : null }));
    if (r.failed.length)
      body.push(alert("error", `Blocked by: ${r.failed.join(", ")}. Fix them and run the checks again.`));
    else if (r.unacknowledged.length) body.push(alert("warn", "Acknowledge the warnings to continue."));
    else body.push(alert("ok", "Every check passed."));
  }
  if (operator) {
    const acks = () => [...document.querySelectorAll("input[name=ack]:checked")].map((i) => i.value);
    const actions = [
      button(
        ran ? "Run the checks again" : "Run pre-flight checks",
        () => run("preflight", { acknowledge: acks() }),
        !ran,
      ),
    ];
    if (ran && !ran.result.failed.length)
      actions.push(button("Continue", () => run("preflight", { acknowledge: acks(), proceed: true })));
    body.push(el("div", { class: "formactions" }, ...actions));
  }
  return body;
}

export function drain(f, run, operator, ctx = {}) {
  const ran = f.steps.drain;
  const body = [
    el(
      "p",
      { class: "muted" },
      `Waiting until the lag of the partitions ${f.groups.join(", ")} read on ${f.source} is at most ${number(f.drain_threshold)} records. Other topics of the flow may keep being written.`,
    ),
    ...(ran ? drainProgress(f, ran.result) : [progressBar(0), el("p", { id: "drain-lag" }, "Not started.")]),
    ctx.demoTraffic || null,
  ];
  if (operator) {
    body.push(thresholdForm(f, ctx));
    const last = ran?.result.trend.at(-1);
    const lastAt = last ? ` Last check ${new Date(last.at * 1000).toLocaleTimeString("en-GB")}.` : "";
    const every = ctx.retryMs
      ? `Retrying in ${Math.round(ctx.retryMs / 1000)} s after an error.${lastAt}`
      : `Checking again ${Math.round((ctx.everyMs || 2000) / 1000)} seconds after each check ends, while this page is open.${lastAt}`;
    body.push(el("p", { class: "faint", id: "drain-every" }, every));
  }
  return body;
}

function progressBar(pct) {
  return el(
    "div",
    { class: "progress", role: "progressbar", "aria-valuenow": pct, "aria-valuemin": 0, "aria-valuemax": 100 },
    el("div", { style: `width:${pct}%` }),
  );
}

// The drain's last check (a DrainResult): lag and progress, trend, ETA, and why it is not done yet.
function drainProgress(f, r) {
  const pct = Math.round(r.progress * 100);
  return [
    progressBar(pct),
    el(
      "p",
      { id: "drain-lag" },
      r.lag === null
        ? "No lag reported yet for the groups' partitions."
        : `Lag ${number(r.lag)} ${r.lag === 1 ? "record" : "records"} on ${partitionCount(r.partitions.length)} (${pct}% drained).`,
    ),
    drainFigures(r),
    sparkline(r.trend),
    drainPartitions(r),
    r.partitions_error
      ? el("p", { class: "faint" }, `The groups' committed partitions could not be read: ${r.partitions_error}`)
      : null,
    r.producers_writing
      ? alert(
          "warn",
          `The source producers are still writing: the end offsets of these partitions on ${f.source} grow by ~${number(r.source_write_rate)} records/s.`,
        )
      : null,
    r.why ? alert("info", `Not done yet: ${r.why}.`) : null,
    r.source_error ? el("p", { class: "faint" }, `Source end offsets unknown: ${r.source_error}`) : null,
    errorOf(r),
  ];
}

function drainFigures(r) {
  const trend =
    r.lag_rate === null
      ? "–"
      : r.lag_rate < 0
        ? `falling ${number(-r.lag_rate)} records/s`
        : r.lag_rate > 0
          ? `rising ${number(r.lag_rate)} records/s`
          : "flat";
  const eta =
    r.eta_seconds === null
      ? "unknown (the lag is not falling)"
      : r.eta_seconds === 0
        ? "now"
        : `about ${age(r.eta_seconds)}`;
  return el(
    "dl",
    { class: "kv" },
    el("dt", {}, "Lag trend"),
    el("dd", { id: "drain-trend" }, trend),
    el("dt", {}, "ETA"),
    el("dd", { id: "drain-eta" }, eta),
    el("dt", {}, "Source writes"),
    el("dd", {}, r.source_write_rate === null ? "–" : `${number(r.source_write_rate)} records/s`),
  );
}

const partitionCount = (n) => `${number(n)} ${n === 1 ? "partition" : "partitions"}`;

// The partitions the drain measures (the groups' committed partitions within the flow), highest lag first.
const SHOWN_PARTITIONS = 20;
function drainPartitions(r) {
  if (!r.partitions.length)
    return el(
      "p",
      { class: "faint", id: "drain-partitions" },
      "The groups have no committed offsets on the flow's topics: nothing to drain.",
    );
  const rows = [...r.partitions].sort((a, b) => (b.lag ?? Infinity) - (a.lag ?? Infinity));
  const more = rows.length - SHOWN_PARTITIONS;
  const t = tableOf(
    ["Partition", { label: "Lag (records)", num: true }, { label: "Source end offset", num: true }],
    rows
      .slice(0, SHOWN_PARTITIONS)
      .map((p) =>
        el(
          "tr",
          {},
          el("td", { class: "mono" }, `${p.topic}-${p.partition}`),
          el("td", { class: "num" }, p.lag === null ? "not reported" : number(p.lag)),
          el("td", { class: "num" }, p.source_end === null ? "unknown" : number(p.source_end)),
        ),
      ),
  );
  // Not a <details>: the panel is drawn again every check, which would close it under the operator's hand.
  return el(
    "div",
    { class: "drain-partitions", id: "drain-partitions" },
    el("p", { class: "faint" }, `Measured: the ${partitionCount(rows.length)} the groups read, highest lag first`),
    t,
    more > 0 ? el("p", { class: "faint" }, `and ${number(more)} more with less lag`) : null,
  );
}

// The lag of the last samples as a small inline SVG line (no chart library for thirty points), with its scale:
// the highest and lowest lag (records) on the left, the time span under it.
const SVG = "http://www.w3.org/2000/svg";
function svgEl(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

function sparkline(trend) {
  const points = trend.filter((s) => s.lag !== null);
  if (points.length < 2) return null;
  const left = 84,
    w = 240,
    h = 40,
    top = 6,
    bottom = 16;
  const t0 = points[0].at,
    t1 = points[points.length - 1].at,
    span = Math.max(1, t1 - t0);
  const lags = points.map((p) => p.lag),
    max = Math.max(...lags),
    min = Math.min(...lags),
    range = Math.max(1, max - min);
  const y = (lag) => (top + h - ((lag - min) / range) * h).toFixed(1);
  const xy = points.map((p) => `${(left + ((p.at - t0) / span) * w).toFixed(1)},${y(p.lag)}`).join(" ");
  const records = (n) => `${compact(n)} records`;
  const clock = (at) => new Date(at * 1000).toLocaleTimeString("en-GB");
  const svg = svgEl("svg", {
    viewBox: `0 0 ${left + w + 4} ${top + h + bottom}`,
    class: "sparkline",
    id: "drain-sparkline",
    role: "img",
    "aria-label": `lag over the last ${points.length} checks (${age(span)}): from ${number(min)} to ${number(max)} records`,
  });
  svg.append(
    svgEl("line", { x1: left, y1: top, x2: left, y2: top + h, class: "axis" }),
    svgEl("line", { x1: left, y1: top + h, x2: left + w, y2: top + h, class: "axis" }),
    svgEl("text", { x: left - 4, y: top + 4, "text-anchor": "end", class: "tick", "data-tick": "max" }, records(max)),
    svgEl("text", { x: left - 4, y: top + h, "text-anchor": "end", class: "tick", "data-tick": "min" }, records(min)),
    svgEl("text", { x: left, y: top + h + 12, class: "tick", "data-tick": "start" }, clock(t0)),
    svgEl(
      "text",
      { x: left + w, y: top + h + 12, "text-anchor": "end", class: "tick", "data-tick": "end" },
      `${clock(t1)} (${age(span)} span)`,
    ),
    svgEl("polyline", { points: xy }),
  );
  return svg;
}

function thresholdForm(f, ctx) {
  if (!ctx.setThreshold) return null;
  const value = ctx.draft ?? f.drain_threshold;
  const input = el("input", {
    type: "number",
    min: 0,
    id: "drain-threshold",
    value,
    class: "narrow",
    oninput: (e) => ctx.onDraft?.(e.target.value),
  });
  return el(
    "div",
    { class: "formactions" },
    el("label", { for: "drain-threshold" }, "Threshold (records)"),
    input,
    button("Change the threshold", () => ctx.setThreshold(input.value), false),
  );
}

export function fence(f, run, operator, ctx = {}) {
  const ran = f.steps.fence;
  const body = [
    el(
      "p",
      {},
      `Stop the producers and the consumers of ${f.groups.join(", ")} on ${f.source}. The wizard then verifies that the source end offsets stop moving and that the groups have no members left.`,
    ),
    ctx.demoTraffic || null,
  ];
  if (ran) body.push(checks(ran.result.checks, { ack: null }), errorOf(ran.result));
  if (operator) {
    const confirm = el(
      "label",
      { class: "ack" },
      el("input", { type: "checkbox", id: "fence-confirm" }),
      `Producers and consumers on ${f.source} have stopped`,
    );
    body.push(
      el(
        "div",
        { class: "formactions" },
        confirm,
        el("span", { class: "spacer" }),
        button("Verify the fence", () => run("fence", { confirmed: document.getElementById("fence-confirm").checked })),
      ),
    );
  }
  return body;
}

function previewTable(rows) {
  const groups = [...new Set(rows.map((p) => p.group))];
  const headers = [
    "Partition",
    { label: "Upstream committed", num: true },
    "Target topic",
    { label: "Translated", num: true },
    "Derived by",
    { label: "Re-read", num: true },
    { label: "Skipped", num: true },
  ];
  return el(
    "div",
    {},
    groups.flatMap((group) => [
      el("h3", { class: "preview-group" }, "Group ", el("code", {}, group)),
      tableOf(headers, rows.filter((p) => p.group === group).map(previewRow)),
    ]),
  );
}

function previewRow(p) {
  return el(
    "tr",
    { title: p.note },
    el("td", { class: "mono" }, `${p.topic}-${p.partition}`),
    el("td", { class: "num" }, number(p.upstream_offset)),
    el("td", { class: "mono" }, p.target_topic),
    el("td", { class: "num" }, p.downstream_offset === null ? "—" : number(p.downstream_offset)),
    el(
      "td",
      {},
      badge(p.exact ? "pass" : "warn", p.method),
      p.note ? el("div", { class: "detail faint" }, p.note) : null,
    ),
    el("td", { class: "num" }, p.reread === null ? "?" : p.reread),
    el("td", { class: "num" }, p.skipped === null ? "?" : p.skipped),
  );
}

function tableOf(headers, rows) {
  const t = table(headers, rows, { empty: "No committed offsets." });
  t.classList.add("compact");
  return t;
}

export function checkpoint(f, run, operator) {
  const ran = f.steps.checkpoint;
  const body = [
    el(
      "p",
      { class: "muted" },
      "A final checkpoint, then per partition: the upstream committed offset, the translated offset, how it was derived, and the records that would be re-read or skipped (expected 0 / 0).",
    ),
  ];
  if (ran) {
    const r = ran.result;
    body.push(el("div", { class: "scroll" }, previewTable(r.preview)));
    // MirrorMaker 2's sparse offset syncs: the bound on re-reads those records allow, stated before apply.
    if (r.precision) body.push(alert("warn", r.precision));
    if (r.waiting)
      body.push(alert("info", `Waiting for replication to reach the groups' positions: ${r.inexact.join(", ")}.`));
    body.push(errorOf(r));
  }
  if (operator)
    body.push(
      el(
        "div",
        { class: "formactions" },
        button(ran ? "Checkpoint again" : "Take the final checkpoint", () => run("checkpoint", {})),
      ),
    );
  return body;
}

// From here on the checkpoint (and, further on, apply and verify) has completed: its result is there to read.
export function apply(f, run, operator) {
  const c = f.steps.checkpoint.result,
    ran = f.steps.apply;
  const reread = c.preview.reduce((n, p) => n + (p.reread ?? 0), 0),
    skipped = c.preview.reduce((n, p) => n + (p.skipped ?? 0), 0);
  const unknown = c.preview.some((p) => p.reread === null || p.skipped === null);
  const body = [
    el(
      "dl",
      { class: "kv" },
      el("dt", {}, "Re-read / skipped"),
      el(
        "dd",
        { id: "totals" },
        unknown ? `${reread} / ${skipped} known; some partitions approximate` : `${reread} / ${skipped}`,
      ),
      el("dt", {}, "RPO"),
      el("dd", { id: "rpo" }, rpo(c.rpo)),
    ),
    c.precision ? alert("warn", c.precision) : null,
    el("div", { class: "scroll" }, previewTable(c.preview)),
    ran ? errorOf(ran.result) : null,
  ];
  if (operator) {
    const override = ran?.result.backwards.length
      ? el("label", { class: "ack" }, el("input", { type: "checkbox", id: "override" }), "Move these offsets backwards")
      : null;
    const label = f.dry_run ? "Simulate the write (dry run)" : `Write the offsets to ${f.target}`;
    body.push(
      el(
        "div",
        { class: "formactions" },
        override,
        el("span", { class: "spacer" }),
        button(label, () =>
          run("apply", { override_backwards: Boolean(document.getElementById("override")?.checked) }),
        ),
      ),
    );
  }
  return body;
}

export function verify(f, run, operator) {
  const ran = f.steps.verify;
  const body = [el("p", { class: "muted" }, `Read the committed offsets back from ${f.target}.`)];
  if (ran) body.push(ran.result.error ? errorOf(ran.result) : verifyTable(ran.result.rows, f.dry_run));
  if (operator)
    body.push(
      el(
        "div",
        { class: "formactions" },
        button("Read back the offsets", () => run("verify", {})),
      ),
    );
  return body;
}

// A dry run wrote nothing, so there is nothing to match: say so rather than show "match" next to no offset.
function verifyTable(rows, dryRun) {
  const state = (v) =>
    dryRun ? badge("info", "not written: dry run") : badge(v.match ? "pass" : "fail", v.match ? "match" : "differs");
  return tableOf(
    [
      "Group",
      "Partition",
      { label: dryRun ? "Would write" : "Written", num: true },
      { label: "Committed on target", num: true },
      "",
    ],
    rows.map((v) =>
      el(
        "tr",
        {},
        el("td", { class: "mono" }, v.group),
        el("td", { class: "mono" }, `${v.topic}-${v.partition}`),
        el("td", { class: "num" }, number(v.expected)),
        el("td", { class: "num" }, number(v.committed)),
        el("td", {}, state(v)),
      ),
    ),
  );
}

// The verify step's outcome in one line, kept on every step after it (with its table one click away on failback).
export function verifySummary(f) {
  const v = f.steps.verify?.result;
  if (!v || v.error) return null;
  const matched = v.rows.filter((r) => r.match).length;
  const text = f.dry_run
    ? `Verify: dry run, ${v.rows.length} partitions would have been written to ${f.target}.`
    : `Verify: ${matched} of ${v.rows.length} partitions committed on ${f.target} as written.`;
  const kind = f.dry_run ? "info" : matched === v.rows.length ? "ok" : "error";
  return el("div", { class: `alert ${kind} verify-summary`, id: "verify-summary", role: "status" }, text);
}

export function failback(f, run, operator) {
  const v = f.steps.verify.result,
    ran = f.steps.failback;
  const body = [
    verifySummary(f),
    el("details", { class: "verify-rows" }, el("summary", {}, "Verified offsets"), verifyTable(v.rows, f.dry_run)),
    el("h3", {}, "Consumer switch checklist"),
    el(
      "ol",
      { class: "checklist" },
      v.checklist.map((item) => el("li", {}, item)),
    ),
    el("h3", { style: "margin-top:1rem" }, "Failback"),
    el(
      "p",
      {},
      `Set up the flow ${f.target} → ${f.source} with offset syncs and checkpoints, so that a later failover back is just as exact.`,
    ),
    ran ? errorOf(ran.result) : null,
  ];
  if (operator)
    body.push(
      el(
        "div",
        { class: "formactions" },
        button("Set up the flow back", () => run("failback", { set_up: true })),
        button("Skip", () => run("failback", { set_up: false }), false),
      ),
    );
  return body;
}

export function done(f, run, operator, ctx = {}) {
  const c = f.steps.checkpoint.result,
    v = f.steps.verify.result,
    b = f.steps.failback.result;
  return [
    alert(
      "ok",
      `${f.dry_run ? "Dry run complete: nothing was changed." : "Failover complete."} ${f.groups.join(", ")} ${f.dry_run ? "would resume" : f.groups.length === 1 ? "resumes" : "resume"} on ${f.target}.`,
    ),
    el(
      "dl",
      { class: "kv" },
      el("dt", {}, "RPO"),
      el("dd", { id: "rpo" }, rpo(c.rpo)),
      el("dt", {}, "Flow back"),
      el(
        "dd",
        {},
        b.skipped
          ? "not set up"
          : b.dry_run
            ? `${b.would_create} (not created: dry run)`
            : el("a", { href: `/flows/${b.flow}/` }, b.name),
      ),
    ),
    verifySummary(f),
    verifyTable(v.rows, f.dry_run),
    el("h3", { style: "margin-top:1rem" }, "Consumer switch checklist"),
    el(
      "ol",
      { class: "checklist" },
      v.checklist.map((item) => el("li", {}, item)),
    ),
    ctx.demoTraffic || null,
  ];
}
