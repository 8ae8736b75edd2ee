// /failover/: failovers so far, a page at a time, searchable and filtered by state (by the API), and step 1 of the
// wizard (the plan) for operators.
import { get, latest } from "./api.js";
import { submit } from "./forms.js";
import { alert, badge, clear, el, number, table, when } from "./dom.js";
import { groupPicker } from "./group-picker.js";

const PAGE = 50;
const query = { offset: 0, search: "", state: "" };

function row(f) {
  return el(
    "tr",
    {},
    el(
      "td",
      {},
      el("a", { href: `/failover/${f.id}/` }, `#${f.id}`),
      el("div", { class: "faint" }, f.mode, f.dry_run ? " · dry run" : null),
    ),
    el("td", {}, `${f.source} → ${f.target}`),
    el("td", { class: "mono" }, f.groups.join(", ")),
    el("td", {}, badge(f.status, f.status === "active" ? `at ${f.step}` : f.status)),
    el("td", {}, when(f.created_at)),
  );
}

function emptyText() {
  const select = document.getElementById("failovers-state");
  const label = query.state ? select.options[select.selectedIndex].text : ""; // "in progress", as the filter says
  const state = label ? ` ${label}` : "";
  if (query.search) return `No${state} failover matches “${query.search}”.`;
  return label ? `No ${label} failover.` : "No failovers yet.";
}

const begin = latest(); // a load shows its answer only if no later load began meanwhile

async function load() {
  const current = begin();
  const box = document.getElementById("failovers");
  try {
    const q = new URLSearchParams({ limit: PAGE, offset: query.offset });
    if (query.search) q.set("search", query.search);
    if (query.state) q.set("state", query.state);
    const page = await get(`/api/v1/failovers/?${q}`);
    if (!current()) return;
    const last = query.offset + page.results.length;
    document.getElementById("failovers-range").textContent = page.count
      ? `${number(query.offset + 1)}–${number(last)} of ${number(page.count)}`
      : "";
    document.getElementById("failovers-prev").disabled = query.offset === 0;
    document.getElementById("failovers-next").disabled = last >= page.count;
    clear(
      box,
      table(["Failover", "Clusters", "Groups", "Status", "Started"], page.results.map(row), {
        empty: emptyText(),
      }),
    );
  } catch (error) {
    if (!current()) return;
    clear(box, alert("error", error.message));
  }
}

let searchTimer = null;
document.getElementById("failovers-search").addEventListener("input", (event) => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => {
    Object.assign(query, { search: event.target.value.trim(), offset: 0 });
    load();
  }, 250);
});
document.getElementById("failovers-state").addEventListener("change", (event) => {
  Object.assign(query, { state: event.target.value, offset: 0 });
  load();
});
document.getElementById("failovers-prev").addEventListener("click", () => {
  query.offset = Math.max(0, query.offset - PAGE);
  load();
});
document.getElementById("failovers-next").addEventListener("click", () => {
  query.offset += PAGE;
  load();
});

const form = document.getElementById("plan-form");
if (form) {
  groupPicker(form);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const extra = { mode: form.querySelector("input[name=mode]:checked").value };
    submit(
      form,
      "POST",
      "/api/v1/failovers/",
      (failover) => window.location.assign(`/failover/${failover.id}/`),
      extra,
    );
  });
}
load();
