// /clusters/: the clusters a page at a time, searchable (alias or bootstrap servers, filtered by the API), with
// their reachability as last observed, and a link to browse their topics and groups.
import { get, latest } from "./api.js";
import { alert, badge, clear, el, number, table } from "./dom.js";

const PAGE = 100;
const query = { offset: 0, search: "" };

function row(cluster, node) {
  const reach =
    !node || node.reachable === null
      ? badge("outline", "not checked yet")
      : node.reachable
        ? badge("healthy", "reachable")
        : badge("failing", "unreachable");
  return el(
    "tr",
    {},
    el("td", {}, el("a", { href: `/clusters/${cluster.id}/` }, cluster.alias)),
    el("td", { class: "mono" }, cluster.bootstrap_servers),
    el("td", {}, cluster.security_protocol),
    el("td", {}, reach, node && node.error ? el("div", { class: "err" }, node.error) : null),
    el("td", { class: "num" }, node ? number(node.topic_count) : "–"),
    el("td", {}, el("a", { href: `/clusters/${cluster.id}/browse/` }, "Topics and groups")),
  );
}

const begin = latest(); // a load shows its answer only if no later load began meanwhile

async function load() {
  const current = begin();
  const box = document.getElementById("clusters");
  try {
    const q = new URLSearchParams({ limit: PAGE, offset: query.offset });
    if (query.search) q.set("search", query.search);
    const [page, dashboard] = await Promise.all([get(`/api/v1/clusters/?${q}`), get("/api/v1/dashboard/")]);
    if (!current()) return;
    const clusters = page.results;
    const last = query.offset + clusters.length;
    document.getElementById("clusters-range").textContent = page.count
      ? `${number(query.offset + 1)}–${number(last)} of ${number(page.count)}`
      : "";
    document.getElementById("clusters-prev").disabled = query.offset === 0;
    document.getElementById("clusters-next").disabled = last >= page.count;
    const nodes = Object.fromEntries(dashboard.nodes.map((n) => [n.id, n]));
    const headers = [
      "Alias",
      "bootstrap.servers",
      "security.protocol",
      "Status",
      { label: "Topics", num: true },
      "Browse",
    ];
    clear(
      box,
      table(
        headers,
        clusters.map((c) => row(c, nodes[c.id])),
        {
          empty: query.search
            ? `No cluster matches “${query.search}”.`
            : "No clusters yet. Add the clusters you replicate between.",
        },
      ),
    );
  } catch (error) {
    if (!current()) return;
    clear(box, alert("error", error.message));
  }
}

let searchTimer = null;
document.getElementById("clusters-search").addEventListener("input", (event) => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => {
    Object.assign(query, { search: event.target.value.trim(), offset: 0 });
    load();
  }, 250);
});
document.getElementById("clusters-prev").addEventListener("click", () => {
  query.offset = Math.max(0, query.offset - PAGE);
  load();
});
document.getElementById("clusters-next").addEventListener("click", () => {
  query.offset += PAGE;
  load();
});
load();
