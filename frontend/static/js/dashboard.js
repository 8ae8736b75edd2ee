// /: the replication graph (Plotly) and the summary tiles, refreshed live from /api/v1/dashboard/.
import { get } from "./api.js";
import { age, ageOfMillis, compact, el, ms, clear } from "./dom.js";
import { at, curve, edgeColors, positions, svgPath } from "./graph.js";
import { color as themeColor, onThemeChange } from "./palette.js";

const REFRESH_MS = 3000;
const NODE_PX = 46;
const MARGIN = { l: 30, r: 30, t: 30, b: 40 };
const graph = document.getElementById("graph");

function bendOf(edge, edges, place) {
  const reverse = edges.some((e) => e.source === edge.target && e.target === edge.source);
  const span = Math.abs(place[edge.target].x - place[edge.source].x);
  if (reverse) return 0.16;
  return span > 1 || place[edge.target].x === place[edge.source].x ? 0.25 : 0;
}

function scales(place) {
  const xs = Object.values(place).map((p) => p.x),
    ys = Object.values(place).map((p) => p.y);
  const x = [Math.min(...xs) - 0.45, Math.max(...xs) + 0.45];
  const y = [Math.min(...ys) - 0.75, Math.max(...ys) + 0.75];
  const width = (graph.clientWidth || 1200) - MARGIN.l - MARGIN.r;
  const height = (graph.clientHeight || 500) - MARGIN.t - MARGIN.b;
  return { x, y, px: width / (x[1] - x[0]), py: height / (y[1] - y[0]) };
}

// The curve parameter where the arrow should end: just outside the target node's circle, in pixels.
function tipParameter(k, s) {
  for (let t = 0.98; t > 0.5; t -= 0.01) {
    const { point } = at(k, t);
    if (Math.hypot((k.b.x - point.x) * s.px, (k.b.y - point.y) * s.py) >= NODE_PX / 2 + 6) return t;
  }
  return 0.8;
}

function edgeLabel(edge) {
  if (edge.hops) return `${edge.hops} hops (heartbeats)`;
  const state =
    edge.health === "healthy"
      ? ""
      : edge.paused
        ? "PAUSED<br>"
        : edge.unplaced
          ? `UNPLACED: ${edge.unplaced} task${edge.unplaced === 1 ? "" : "s"}<br>`
          : `${edge.health.toUpperCase()}<br>`;
  // No <b>: Plotly would draw it as a tspan with a style attribute, which the Content-Security-Policy refuses.
  return `${state}${compact(edge.records_per_second)}/s · lag ${compact(edge.lag)}<br>p99 ${ms(edge.latency_p99_ms)}`;
}

function drawEdge(edge, k, s, color, theme, out) {
  const dash = edge.hops ? "dot" : edge.paused ? "dash" : "solid";
  out.shapes.push({ type: "path", path: svgPath(k), line: { color, width: edge.hops ? 2 : 3, dash }, layer: "below" });
  const tip = tipParameter(k, s);
  const head = at(k, tip).point,
    tail = at(k, tip - 0.04).point;
  out.annotations.push({
    x: head.x,
    y: head.y,
    ax: tail.x,
    ay: tail.y,
    xref: "x",
    yref: "y",
    axref: "x",
    ayref: "y",
    showarrow: true,
    arrowhead: 2,
    arrowsize: 1.1,
    arrowwidth: edge.hops ? 2 : 3,
    arrowcolor: color,
    text: "",
  });
  out.annotations.push({
    x: k.mid.x,
    y: k.mid.y,
    xref: "x",
    yref: "y",
    showarrow: false,
    text: edgeLabel(edge),
    font: { size: 12, color: theme.fg },
    bgcolor: theme.panel,
    bordercolor: color,
    borderwidth: 1.5,
    borderpad: 5,
    align: "center",
    captureevents: Boolean(edge.url),
    url: edge.url,
    name: edge.name,
  });
}

function figure(data) {
  const place = positions(data.nodes, data.edges);
  const s = scales(place);
  const out = { shapes: [], annotations: [] };
  const colors = edgeColors();
  const theme = { fg: themeColor("fg"), panel: themeColor("panel"), node: themeColor("node") };
  const all = [...data.edges, ...data.hops.map((h) => ({ ...h, health: "hop" }))];
  for (const edge of all) {
    if (!(edge.source in place) || !(edge.target in place)) continue;
    const bend = edge.hops ? 0.3 : bendOf(edge, data.edges, place);
    const color = edge.paused ? colors.paused : edge.unplaced ? colors.unplaced : colors[edge.health] || colors.hop;
    drawEdge(edge, curve(place[edge.source], place[edge.target], bend), s, color, theme, out);
  }
  const nodes = {
    type: "scatter",
    mode: "markers+text",
    hoverinfo: "text",
    x: data.nodes.map((n) => place[n.alias].x),
    y: data.nodes.map((n) => place[n.alias].y),
    text: data.nodes.map((n) => n.alias),
    textposition: "bottom center",
    textfont: { size: 14, color: theme.fg, weight: "bold" },
    hovertext: data.nodes.map((n) =>
      n.reachable === false ? `${n.alias}: unreachable` : `${n.alias}: ${n.topic_count ?? "?"} topics`,
    ),
    customdata: data.nodes.map((n) => n.url),
    marker: {
      size: NODE_PX,
      color: data.nodes.map((n) => (n.reachable === false ? colors.failing : theme.node)),
      line: { color: theme.panel, width: 3 },
      symbol: "circle",
    },
  };
  const layout = {
    margin: MARGIN,
    showlegend: false,
    dragmode: false,
    hovermode: "closest",
    paper_bgcolor: theme.panel,
    plot_bgcolor: theme.panel,
    xaxis: { range: s.x, visible: false, fixedrange: true },
    yaxis: { range: s.y, visible: false, fixedrange: true },
    shapes: out.shapes,
    annotations: out.annotations,
    font: { family: "system-ui, sans-serif", color: theme.fg },
    hoverlabel: { bgcolor: theme.panel, bordercolor: theme.fg, font: { color: theme.fg } },
  };
  return { data: [nodes], layout };
}

function setTile(name, value, sub, state) {
  const tile = document.querySelector(`[data-tile="${name}"]`);
  tile.querySelector(".value").textContent = value;
  if (sub !== undefined) tile.querySelector(".sub").textContent = sub;
  tile.classList.toggle("bad", state === "bad");
  tile.classList.toggle("good", state === "good");
}

// Two rates, each meaning one thing: records entering replication (each counted once, on the flow out of its
// origin cluster) and records copied (every hop: a stream through two flows counts twice).
function tiles(t) {
  const origins = t.entering_by_origin.filter((o) => o.records_per_second > 0);
  setTile(
    "entering",
    compact(t.entering_per_second),
    origins.length
      ? origins.map((o) => `${o.cluster} ${compact(o.records_per_second)}`).join(" · ")
      : "nothing entering",
  );
  setTile("copied", compact(t.copied_per_second));
  setTile("lag", compact(t.total_lag));
  const unplaced = t.unplaced_tasks
    ? ` · ${t.unplaced_tasks} task${t.unplaced_tasks === 1 ? "" : "s"} unplaced (${t.capacity.free} free slots)`
    : "";
  setTile(
    "unhealthy",
    `${t.unhealthy}`,
    `of ${t.flows} flow${t.flows === 1 ? "" : "s"}${unplaced}`,
    t.flows ? (t.unhealthy ? "bad" : "good") : "",
  );
  // Idle groups (nothing committed since their newest checkpoint) are current, not old: counted, never the age.
  const cp = t.oldest_checkpoint;
  const idle = cp?.idle_groups ? `${cp.idle_groups} idle group${cp.idle_groups === 1 ? "" : "s"}` : "";
  let value = "–";
  let sub = "no checkpoints yet";
  if (cp?.timestamp != null) {
    value = age(ageOfMillis(cp.timestamp));
    sub = `${cp.group} on ${cp.flow}${idle ? ` · ${idle}` : ""}`;
  } else if (cp) {
    value = "idle";
    sub = `${idle}: nothing to checkpoint`;
  }
  setTile("checkpoint", value, sub);
}

function emptyState() {
  const admin = document.body.dataset.role === "admin";
  clear(
    graph,
    el(
      "div",
      { class: "empty" },
      el("h2", {}, "No clusters yet"),
      el("p", {}, "Add the Kafka clusters you replicate between, then a flow from one to the other."),
      admin ? el("a", { class: "btn primary", href: "/clusters/new/" }, "Add a cluster") : null,
    ),
  );
}

let drawn = false;
let shown = null; // the last dashboard answer drawn, redrawn in the new colours when the theme changes

async function draw(data) {
  const { data: traces, layout } = figure(data);
  await window.Plotly.react(graph, traces, layout, { displayModeBar: false, responsive: true });
  if (!drawn) bindClicks();
  drawn = true;
  shown = data;
}

async function refresh() {
  const updated = document.getElementById("updated");
  try {
    const data = await get("/api/v1/dashboard/");
    tiles(data.tiles);
    if (!data.nodes.length) emptyState();
    else await draw(data);
    graph.dataset.edges = JSON.stringify(
      data.edges.map((e) => ({ name: e.name, health: e.health, rps: e.records_per_second, unplaced: e.unplaced })),
    );
    graph.dataset.hops = JSON.stringify(data.hops);
    updated.textContent = `live · updated ${new Date().toLocaleTimeString("en-GB")}`;
    updated.classList.remove("stale");
  } catch (error) {
    updated.textContent = `not updated: ${error.message}`;
    updated.classList.add("stale");
  }
}

function bindClicks() {
  graph.on("plotly_click", (event) => {
    const url = event.points[0]?.customdata;
    if (url) window.location.assign(url);
  });
  graph.on("plotly_clickannotation", (event) => {
    if (event.annotation.url) window.location.assign(event.annotation.url);
  });
}

refresh();
setInterval(refresh, REFRESH_MS);
onThemeChange(() => {
  if (shown && drawn) draw(shown);
});
