// The plan's group picker: the source cluster's consumer groups that committed offsets in topics the flow
// source -> target replicates (GET /api/v1/failovers/groups/), with state, lag and checkpoint age. Ticking a group
// adds it to the plan's "groups" textarea and unticking removes it; a group typed there by hand stays, and ticks
// its row. A read that fails shows the API's error (an unreachable source names it and the broker's error).
import { ApiError, get, latest } from "./api.js";
import { age, alert, badge, clear, el, number, table } from "./dom.js";

const PAGE = 50;
const SEARCH_DELAY_MS = 300;
// STABLE: consumers still run on the source (the fence step waits for them to stop); EMPTY: none runs.
const STATE_BADGE = { STABLE: "healthy", EMPTY: "outline" };
const members = (n) => el("span", { class: "faint" }, ` ${n} ${n === 1 ? "member" : "members"}`);

// A 400 naming a field ({"target": ["no flow ..."]}) says why; the summary alone would be "Request failed (400)".
function reason(error) {
  const data = error.data;
  if (!data || typeof data !== "object" || typeof data.detail === "string") return error.message;
  return Object.entries(data)
    .map(([field, messages]) => `${field}: ${[messages].flat().join(" ")}`)
    .join(" ");
}

export function groupPicker(form) {
  const box = document.getElementById("picker-list");
  const search = document.getElementById("picker-search");
  const range = document.getElementById("picker-range");
  const prev = document.getElementById("picker-prev");
  const next = document.getElementById("picker-next");
  const textarea = form.elements.groups;
  let offset = 0;
  const begin = latest(); // a slow answer for a query the operator has left is dropped
  let timer = null;

  const typed = () =>
    textarea.value
      .split("\n")
      .map((s) => s.trim())
      .filter(Boolean);

  function setPicked(group, on) {
    const groups = typed().filter((g) => g !== group);
    if (on) groups.push(group);
    textarea.value = groups.join("\n");
  }

  function sync() {
    const picked = new Set(typed());
    const boxes = [...box.querySelectorAll("input[data-group]")];
    for (const b of boxes) b.checked = picked.has(b.dataset.group);
    const all = box.querySelector("#picker-all");
    const enabled = boxes.filter((b) => !b.disabled);
    if (all) all.checked = enabled.length > 0 && enabled.every((b) => b.checked);
  }

  function checkpointCell(g) {
    if (g.checkpoint_timestamp === null) return el("span", { class: "faint" }, "no checkpoint yet");
    return el("span", { title: `${g.checkpoint_partitions} partitions` }, `${age(g.checkpoint_age_seconds)} ago`);
  }

  function row(g) {
    const off = !g.in_groups_filter;
    const tick = el("input", {
      type: "checkbox",
      "data-group": g.group,
      "aria-label": `Pick ${g.group}`,
      disabled: off,
      onchange: (event) => {
        setPicked(g.group, event.target.checked);
        sync();
      },
    });
    return el(
      "tr",
      { class: off ? "off" : "", "data-row": g.group },
      el("td", {}, tick),
      el(
        "td",
        { class: "mono" },
        g.group,
        off ? el("div", { class: "faint" }, "not in the flow's groups filter: no checkpoints") : null,
      ),
      el("td", { class: "nowrap" }, badge(STATE_BADGE[g.state] || "warn", g.state.toLowerCase()), members(g.members)),
      el("td", { class: "num", "data-lag": g.group }, number(g.lag)),
      el("td", {}, checkpointCell(g)),
    );
  }

  function render(body, source, target) {
    const rows = body.results;
    range.textContent = body.count ? `${offset + 1}–${offset + rows.length} of ${body.count}` : "";
    prev.disabled = offset === 0;
    next.disabled = offset + rows.length >= body.count;
    if (!body.count) {
      const why = search.value
        ? `No consumer group whose id contains “${search.value}” committed offsets on ${source} in topics the flow ${source} → ${target} replicates.`
        : `No consumer group committed offsets on ${source} in topics the flow ${source} → ${target} replicates.`;
      clear(box, alert("info", `${why} Type group ids below if you know them.`));
      return;
    }
    const all = el("input", {
      type: "checkbox",
      id: "picker-all",
      "aria-label": "Pick every listed group",
      onchange: (event) => {
        for (const b of box.querySelectorAll("input[data-group]:not(:disabled)"))
          setPicked(b.dataset.group, event.target.checked);
        sync();
      },
    });
    clear(
      box,
      body.truncated
        ? alert("warn", `Only the first ${body.scanned} matching groups were read: narrow the search.`)
        : null,
      body.checkpoints_error ? alert("warn", `Checkpoints: ${body.checkpoints_error}`) : null,
      table([{ label: all }, "Group", "State", { label: "Lag", num: true }, "Checkpoint"], rows.map(row)),
    );
    box.querySelector("table").classList.add("compact");
    sync();
  }

  async function load() {
    const current = begin();
    const source = form.elements.source.value;
    const target = form.elements.target.value;
    const mode = form.querySelector("input[name=mode]:checked").value;
    range.textContent = "";
    if (mode === "failback") {
      prev.disabled = next.disabled = true;
      clear(
        box,
        alert(
          "info",
          `A failback moves groups that read remote topics on ${source}: type their ids below (the picker lists groups of a planned or unplanned failover).`,
        ),
      );
      return;
    }
    clear(box, el("div", { class: "empty" }, `Reading the consumer groups of ${source}…`));
    const query = new URLSearchParams({ source, target, search: search.value, limit: PAGE, offset });
    try {
      const body = await get(`/api/v1/failovers/groups/?${query}`);
      if (current()) render(body, source, target);
    } catch (error) {
      if (!current()) return;
      prev.disabled = next.disabled = true;
      const text = error instanceof ApiError ? reason(error) : String(error);
      clear(box, alert("error", `The groups of ${source} could not be listed: ${text}`));
    }
  }

  function reload() {
    offset = 0;
    load();
  }

  search.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(reload, SEARCH_DELAY_MS);
  });
  prev.addEventListener("click", () => {
    offset = Math.max(0, offset - PAGE);
    load();
  });
  next.addEventListener("click", () => {
    offset += PAGE;
    load();
  });
  document.getElementById("picker-reload").addEventListener("click", load);
  for (const input of form.querySelectorAll("select[name=source], select[name=target], input[name=mode]"))
    input.addEventListener("change", reload);
  textarea.addEventListener("input", sync);
  load();
}
