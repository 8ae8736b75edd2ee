// /: the replication graph (Plotly) and the summary tiles, refreshed live from /api/v1/dashboard/.
import { get } from "./api.js";
import { age, ageOfMillis, compact, el, ms, clear } from "./dom.js";
import { NODE_RADIUS, edgeColors, layout as graphLayout } from "./graph.js";
import { color as themeColor, onThemeChange } from "./palette.js";

const REFRESH_MS = 3000;
const LABEL_FONT = 12;
const NAME_FONT = 14;
const FONT = "system-ui, sans-serif";
const graph = document.getElementById("graph");
const minHeight = graph.clientHeight || 460; // the stylesheet's height; a crowded graph grows taller than it

// Text widths as the browser will draw them: the sizes of the layout's slots.
const measure = (() => {
  const context = document.createElement("canvas").getContext("2d");
  return (text, font) => {
    context.font = font;
    return context.measureText(text).width;
  };
})();

// A label's box as Plotly draws it: its lines at 1.3 line spacing, the border pad and border on each side.
function labelSize(text) {
  const lines = text.split("<br>");
  const widest = Math.max(...lines.map((line) => measure(line, `${LABEL_FONT}px ${FONT}`)));
  return { w: widest + 2 * (5 + 1.5) + 6, h: lines.length * LABEL_FONT * 1.3 + 2 * (5 + 1.5) + 6 };
}

function edgeLabel(edge) {
  if (edge.hops) return `${edge.hops} hops (heartbeats)`;
  // Paused first: a paused flow's tasks may still read healthy, and the label must not look like a running flow's.
  const state = edge.paused
    ? "PAUSED<br>"
    : edge.health === "healthy"
      ? ""
      : edge.unplaced
        ? `UNPLACED: ${edge.unplaced} task${edge.unplaced === 1 ? "" : "s"}<br>`
        : `${edge.health.toUpperCase()}<br>`;
  // No <b>: Plotly would draw it as a tspan with a style attribute, which the Content-Security-Policy refuses.
  return `${state}${compact(edge.records_per_second)}/s · lag ${compact(edge.lag)}<br>p99 ${ms(edge.latency_p99_ms)}`;
}

function drawEdge(edge, at, color, theme, out) {
  const dash = edge.hops ? "dot" : edge.paused ? "dash" : "solid";
  out.shapes.push({ type: "path", path: at.path, line: { color, width: edge.hops ? 2 : 3, dash }, layer: "below" });
  out.shapes.push({ type: "path", path: at.arrow, line: { color, width: 1 }, fillcolor: color, layer: "above" });
  out.annotations.push({
    x: at.label.x,
    y: at.label.y,
    xref: "x",
    yref: "y",
    xanchor: "center",
    yanchor: "middle",
    showarrow: false,
    text: edge.text,
    font: { size: LABEL_FONT, color: theme.fg },
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
  const colors = edgeColors();
  const theme = { fg: themeColor("fg"), panel: themeColor("panel"), node: themeColor("node") };
  const known = new Set(data.nodes.map((n) => n.alias));
  const all = [...data.edges, ...data.hops.map((h) => ({ ...h, health: "hop" }))]
    .filter((e) => known.has(e.source) && known.has(e.target) && e.source !== e.target)
    .map((e) => ({ ...e, text: edgeLabel(e) }));
  const nodes = data.nodes.map((n) => ({ alias: n.alias, nameWidth: measure(n.alias, `bold ${NAME_FONT}px ${FONT}`) }));
  const width = graph.clientWidth || 1200; // a graph of more ranks than this holds scrolls sideways
  const edges = all.map((e) => ({ source: e.source, target: e.target, label: labelSize(e.text) }));
  const laid = graphLayout(nodes, edges, width, minHeight);
  graph.dataset.clashes = laid.clashes;
  const out = { shapes: [], annotations: [] };
  all.forEach((edge, i) => {
    const color = edge.paused ? colors.paused : edge.unplaced ? colors.unplaced : colors[edge.health] || colors.hop;
    drawEdge(edge, laid.edges[i], color, theme, out);
  });
  const markers = {
    type: "scatter",
    mode: "markers+text",
    hoverinfo: "text",
    x: data.nodes.map((n) => laid.nodes[n.alias].x),
    y: data.nodes.map((n) => laid.nodes[n.alias].y),
    text: data.nodes.map((n) => n.alias),
    textposition: "bottom center",
    textfont: { size: NAME_FONT, color: theme.fg, weight: "bold" },
    hovertext: data.nodes.map((n) =>
      n.reachable === false ? `${n.alias}: unreachable` : `${n.alias}: ${n.topic_count ?? "?"} topics`,
    ),
    customdata: data.nodes.map((n) => n.url),
    marker: {
      size: 2 * NODE_RADIUS,
      color: data.nodes.map((n) => (n.reachable === false ? colors.failing : theme.node)),
      line: { color: theme.panel, width: 3 },
      symbol: "circle",
    },
  };
  // One data unit is one pixel (y down), as the layout computed it: no margins, fixed ranges.
  const layout = {
    width: laid.width,
    height: laid.height,
    margin: { l: 0, r: 0, t: 0, b: 0 },
    showlegend: false,
    dragmode: false,
    hovermode: "closest",
    paper_bgcolor: theme.panel,
    plot_bgcolor: theme.panel,
    xaxis: { range: [0, laid.width], visible: false, fixedrange: true },
    yaxis: { range: [laid.height, 0], visible: false, fixedrange: true },
    shapes: out.shapes,
    annotations: out.annotations,
    font: { family: FONT, color: theme.fg },
    hoverlabel: { bgcolor: theme.panel, bordercolor: theme.fg, font: { color: theme.fg } },
  };
  return { data: [markers], layout };
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
  graph.style.height = `${layout.height}px`;
  await window.Plotly.react(graph, traces, layout, { displayModeBar: false });
  if (!drawn) bindClicks();
  drawn = true;
  shown = data;
}

async function refresh() {
  const updated = document.getElementById("updated");
  try {
    const data = await get("/api/v1/dashboard/");
    tiles(data.tiles);
    if (!data.nodes.length) {
      graph.style.height = ""; // back to the stylesheet's, from a crowded graph's
      emptyState();
    } else await draw(data);
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
// The layout is in the canvas's pixels: a new width is a new layout, not the old one stretched.
let resizing = null;
window.addEventListener("resize", () => {
  clearTimeout(resizing);
  resizing = setTimeout(() => shown && drawn && draw(shown), 150);
});
