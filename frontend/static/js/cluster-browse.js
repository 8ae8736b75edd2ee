// /clusters/<id>/browse/: what the cluster holds (the one write: a consumer group's offset reset, group-reset.js). Tabs for topics, consumer groups and remote topics, each
// searchable and paged by the API (GET /api/v1/clusters/<id>/browse/...), and a topic's or a group's detail. The
// location's hash says what is shown (#topics, #groups, #remote-topics, #topic/<name>, #group/<id>), so the back
// button and links work. A read that fails shows the cluster's error, never an empty table.
import { get, latest } from "./api.js";
import { alert, badge, clear, el, number, table } from "./dom.js";
import { resetPanel } from "./group-reset.js";

const root = document.getElementById("browser");
const base = `/api/v1/clusters/${root.dataset.id}/browse`;
const PAGE = 100;
const TABS = {
  topics: { path: "topics/", noun: "topic", none: "No topics on this cluster." },
  groups: { path: "groups/", noun: "consumer group", none: "No consumer groups on this cluster." },
  "remote-topics": {
    path: "remote-topics/",
    noun: "remote topic",
    none: "No remote topics: no topic here is named as a copy from another cluster by the replication policy.",
  },
};
const state = { tab: "topics", offset: 0, search: { topics: "", groups: "", "remote-topics": "" } };
const begin = latest(); // a slow answer for a view the user has left is dropped

const box = (id) => document.getElementById(id);

function flowLinks(flows) {
  if (!flows.length) return el("span", { class: "faint" }, "none");
  return el(
    "div",
    { class: "flowrefs" },
    flows.map((f) =>
      el(
        "span",
        {},
        el("a", { href: `/flows/${f.id}/` }, f.name),
        el(
          "span",
          { class: "muted" },
          f.role === "source" ? ` → ${f.remote_topic}` : ` writes it from ${f.source_topic}`,
        ),
      ),
    ),
  );
}

const topicLink = (name) => el("a", { class: "mono", href: `#topic/${encodeURIComponent(name)}` }, name);

function topicCells(t) {
  return [
    el("td", { class: "num" }, number(t.partitions)),
    el("td", { class: "num" }, number(t.replication_factor)),
    el("td", { class: "num" }, number(t.end_offset)),
    el("td", { class: "num" }, number(t.records)),
  ];
}

const TOPIC_HEADS = [
  { label: "Partitions", num: true },
  { label: "Replication factor", num: true },
  { label: "End offset", num: true },
  { label: "Records", num: true },
];

function topicsTable(page, empty) {
  const rows = page.results.map((t) =>
    el(
      "tr",
      { "data-topic": t.topic },
      el("td", {}, topicLink(t.topic), t.internal ? [" ", badge("outline", "internal")] : null),
      topicCells(t),
      el("td", {}, flowLinks(t.flows)),
    ),
  );
  return table(["Topic", ...TOPIC_HEADS, "Replicated by"], rows, { empty });
}

function groupsTable(page, empty) {
  const rows = page.results.map((g) =>
    el(
      "tr",
      { "data-group": g.group },
      el("td", {}, el("a", { class: "mono", href: `#group/${encodeURIComponent(g.group)}` }, g.group)),
      el("td", {}, badge("outline", g.state)),
      el("td", { class: "num" }, number(g.members)),
      el("td", { class: "muted" }, g.simple ? "commits offsets only (no members)" : ""),
    ),
  );
  return table(["Group", "State", { label: "Members", num: true }, ""], rows, { empty });
}

function remoteTable(page, empty) {
  const rows = page.results.map((t) =>
    el(
      "tr",
      { "data-topic": t.topic },
      el("td", {}, topicLink(t.topic)),
      el("td", {}, t.source_chain.join(" ← ")),
      el("td", { class: "mono" }, t.original_topic),
      topicCells(t),
      el("td", {}, flowLinks(t.flows)),
    ),
  );
  const heads = ["Remote topic", "Came from (nearest first)", "Original topic", ...TOPIC_HEADS, "Written by"];
  return table(heads, rows, { empty });
}

function upstreamLine(upstream) {
  if (!upstream.length)
    return el("div", { class: "upstream muted" }, "No heartbeats from another cluster reach this one.");
  return el(
    "div",
    { class: "upstream" },
    el("span", { class: "muted" }, "Heartbeats arrive from:"),
    upstream.map((u) =>
      el(
        "span",
        {},
        el("b", {}, u.alias),
        " ",
        u.flow !== null
          ? el("a", { href: `/flows/${u.flow}/` }, "direct flow")
          : el("span", { class: "muted" }, `${u.hops} ${u.hops === 1 ? "hop" : "hops"}`),
      ),
    ),
  );
}

const RENDER = { topics: topicsTable, groups: groupsTable, "remote-topics": remoteTable };

async function loadList() {
  const current = begin();
  const { tab, offset } = state;
  const search = state.search[tab];
  const spec = TABS[tab];
  const list = box("browse-list");
  try {
    const q = new URLSearchParams({ limit: PAGE, offset });
    if (search) q.set("search", search);
    const page = await get(`${base}/${spec.path}?${q}`);
    if (!current()) return;
    const last = offset + page.results.length;
    box("browse-range").textContent = page.count
      ? `${number(offset + 1)}–${number(last)} of ${number(page.count)}`
      : "";
    box("browse-prev").disabled = offset === 0;
    box("browse-next").disabled = last >= page.count;
    clear(box("upstream"), tab === "remote-topics" ? upstreamLine(page.upstream) : null);
    const empty = search ? `No ${spec.noun} matches “${search}”.` : spec.none;
    clear(list, RENDER[tab](page, empty));
  } catch (error) {
    if (!current()) return;
    box("browse-range").textContent = "";
    clear(box("upstream"));
    clear(list, alert("error", error.message));
  }
}

function kv(pairs) {
  return el(
    "dl",
    { class: "kv" },
    pairs.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]),
  );
}

function topicDetail(t) {
  const partitions = t.partition_details.map((p) =>
    el(
      "tr",
      { "data-partition": p.partition },
      el("td", { class: "num" }, p.partition),
      el("td", { class: "num" }, p.leader === null ? el("span", { class: "err" }, "no leader") : p.leader),
      el("td", {}, p.replicas.join(", ")),
      el("td", {}, p.isr.join(", ")),
      el("td", { class: "num" }, number(p.start_offset)),
      el("td", { class: "num" }, number(p.end_offset)),
      el("td", { class: "num" }, number(p.records)),
    ),
  );
  const configs = t.configs.map((c) =>
    el(
      "tr",
      {},
      el("td", { class: "mono" }, c.name),
      el("td", { class: "mono" }, c.value ?? el("span", { class: "faint" }, "(sensitive)")),
      el("td", { class: "muted" }, c.source),
    ),
  );
  const partitionHeads = [
    { label: "Partition", num: true },
    { label: "Leader", num: true },
    "Replicas",
    "In-sync replicas",
    { label: "Start offset", num: true },
    { label: "End offset", num: true },
    { label: "Records", num: true },
  ];
  return [
    el(
      "div",
      { class: "cardhead" },
      el("h2", { class: "mono" }, t.topic),
      t.internal ? badge("outline", "internal") : null,
    ),
    el(
      "section",
      { class: "card" },
      kv([
        ["Partitions", number(t.partitions)],
        ["Replication factor", number(t.replication_factor)],
        ["End offset (sum)", number(t.end_offset)],
        ["Records (end − start)", number(t.records)],
        ["Replicated by", flowLinks(t.flows)],
      ]),
    ),
    el("section", { class: "card flush", id: "topic-partitions" }, table(partitionHeads, partitions)),
    el("h3", { class: "subhead" }, "Configs not at Kafka's default"),
    el(
      "section",
      { class: "card flush", id: "topic-configs" },
      table(["Name", "Value", "Set by"], configs, { empty: "Every config is at Kafka's default." }),
    ),
  ];
}

function groupDetail(g) {
  const members = g.member_details.map((m) =>
    el(
      "tr",
      {},
      el("td", { class: "mono" }, m.client_id),
      el("td", { class: "mono" }, m.host),
      el("td", { class: "mono" }, m.assignment.map((a) => `${a.topic}-${a.partition}`).join(", ") || "–"),
    ),
  );
  const offsets = g.offsets.map((o) =>
    el(
      "tr",
      { "data-partition": `${o.topic}-${o.partition}` },
      el("td", { class: "mono" }, `${o.topic}-${o.partition}`),
      el(
        "td",
        { class: "num" },
        o.committed_offset === null ? el("span", { class: "faint" }, "nothing committed") : number(o.committed_offset),
      ),
      el("td", { class: "num" }, number(o.end_offset)),
      el("td", { class: "num lag" }, o.lag === null ? "–" : number(o.lag)),
      el("td", { class: "mono" }, o.client_id ?? el("span", { class: "faint" }, "unassigned")),
    ),
  );
  const offsetHeads = [
    "Partition",
    { label: "Committed offset", num: true },
    { label: "End offset", num: true },
    { label: "Lag", num: true },
    "Member (client.id)",
  ];
  const lags = g.offsets.filter((o) => o.lag !== null);
  return [
    el("div", { class: "cardhead" }, el("h2", { class: "mono" }, g.group), badge("outline", g.state)),
    resetPanel(root.dataset.id, g.group, [...new Set(g.offsets.map((o) => o.topic))]),
    el(
      "section",
      { class: "card" },
      kv([
        ["Members", number(g.members)],
        ["Total lag", lags.length ? number(lags.reduce((sum, o) => sum + o.lag, 0)) : "–"],
        ["Assignor", g.assignor || "–"],
        ["Coordinator", g.coordinator === null ? "–" : `broker ${g.coordinator}`],
      ]),
    ),
    el("h3", { class: "subhead" }, "Members"),
    el(
      "section",
      { class: "card flush", id: "group-members" },
      table(["client.id", "Host", "Assigned partitions"], members, { empty: "No members: nobody consumes now." }),
    ),
    el("h3", { class: "subhead" }, "Offsets and lag"),
    el(
      "section",
      { class: "card flush", id: "group-offsets" },
      table(offsetHeads, offsets, { empty: "The group has committed no offset and is assigned no partition." }),
    ),
  ];
}

async function loadDetail(kind, name) {
  const current = begin();
  const detail = box("detail");
  const back = kind === "topic" ? "topics" : "groups";
  box("detail-back").href = `#${state.tab === "remote-topics" && kind === "topic" ? "remote-topics" : back}`;
  box("detail-back").textContent = `← ${kind === "topic" ? "Topics" : "Consumer groups"}`;
  clear(detail, el("div", { class: "empty" }, "Loading…"));
  try {
    const found = await get(`${base}/${kind}s/${encodeURIComponent(name)}/`);
    if (!current()) return;
    clear(detail, kind === "topic" ? topicDetail(found) : groupDetail(found));
  } catch (error) {
    if (!current()) return;
    clear(detail, alert("error", error.message));
  }
}

// The search is kept at once and loaded after a pause in typing; leaving the list (a detail opened) cancels that
// load, which as the newer request would otherwise drop the detail's answer.
let searchTimer = null;

function route() {
  clearTimeout(searchTimer);
  const hash = decodeURIComponent(location.hash.slice(1));
  const [kind, ...rest] = hash.split("/");
  const detail = (kind === "topic" || kind === "group") && rest.length > 0;
  if (!detail && kind in TABS && kind !== state.tab) Object.assign(state, { tab: kind, offset: 0 });
  for (const link of document.querySelectorAll(".tabs a")) {
    const active = detail
      ? link.dataset.tab === (kind === "group" ? "groups" : state.tab)
      : link.dataset.tab === state.tab;
    link.classList.toggle("active", active);
  }
  box("list-view").hidden = detail;
  box("detail-view").hidden = !detail;
  if (detail) {
    loadDetail(kind, rest.join("/"));
    return;
  }
  box("browse-search").value = state.search[state.tab];
  loadList();
}

box("browse-search").addEventListener("input", (event) => {
  state.search[state.tab] = event.target.value.trim();
  state.offset = 0;
  clearTimeout(searchTimer);
  searchTimer = setTimeout(loadList, 250);
});
box("browse-prev").addEventListener("click", () => {
  state.offset = Math.max(0, state.offset - PAGE);
  loadList();
});
box("browse-next").addEventListener("click", () => {
  state.offset += PAGE;
  loadList();
});
window.addEventListener("hashchange", route);
route();
