// /clusters/: every cluster with its reachability as last observed, and a link to browse its topics and groups.
import { get } from "./api.js";
import { alert, badge, clear, el, number, table } from "./dom.js";

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

async function load() {
  const box = document.getElementById("clusters");
  try {
    const [clusters, dashboard] = await Promise.all([get("/api/v1/clusters/"), get("/api/v1/dashboard/")]);
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
        { empty: "No clusters yet. Add the clusters you replicate between." },
      ),
    );
  } catch (error) {
    clear(box, alert("error", error.message));
  }
}

load();
