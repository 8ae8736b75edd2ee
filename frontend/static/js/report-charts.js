// The flow page's pictures of its analytics reports (GET /api/v1/flows/<id>/reports/: each report's `series` and,
// for topology, `graph`): latency percentiles over time, one chart per path; the audit's complete, missing and
// duplicated records per window; the topology as a graph of clusters and links, dead links marked and named.
// Each function returns the chart's node and draws into it once the node is on the page (Plotly measures it).
import { el } from "./dom.js";
import { color as themeColor, withAlpha } from "./palette.js";

// The percentiles a latency row may hold, in the order drawn; a report without one simply has no such trace.
const LATENCY_STATS = [
  ["replication_latency_ms_p50", "p50", "chart-rps"],
  ["replication_latency_ms_p95", "p95", "chart-lag"],
  ["replication_latency_ms_p99", "p99", "chart-p99"],
  ["replication_latency_ms_max", "max", "faint"],
];

function baseLayout(extra = {}) {
  const panel = themeColor("panel");
  return {
    margin: { l: 52, r: 12, t: 8, b: 34 },
    height: 220,
    paper_bgcolor: panel,
    plot_bgcolor: panel,
    font: { family: "system-ui, sans-serif", color: themeColor("muted"), size: 11 },
    hoverlabel: { bgcolor: panel, font: { color: themeColor("fg") } },
    legend: { orientation: "h", x: 0, y: 1.02, yanchor: "bottom", traceorder: "normal", font: { size: 10 } },
    ...extra,
  };
}

// Times on the axis and in the hover are 24-hour, in the browser's time zone (Plotly reads Date objects as local).
function timeAxis() {
  return {
    type: "date",
    showgrid: false,
    linecolor: themeColor("line"),
    tickformat: "%H:%M\n%d %b",
    hoverformat: "%d %b %H:%M",
    nticks: 8,
  };
}

function valueAxis(title) {
  return {
    title: { text: title, font: { size: 10 } },
    rangemode: "tozero",
    gridcolor: themeColor("grid"),
    zerolinecolor: themeColor("line"),
    nticks: 5,
  };
}

// A chart over nothing says so, on an empty plot, instead of drawing axes that suggest zeros.
const NO_DATA = {
  text: "no data",
  showarrow: false,
  xref: "paper",
  yref: "paper",
  x: 0.5,
  y: 0.5,
  font: { size: 13 },
};

function draw(node, traces, layout) {
  const final = traces.length
    ? layout
    : {
        ...layout,
        height: 90,
        xaxis: { visible: false },
        yaxis: { visible: false },
        showlegend: false,
        annotations: [{ ...NO_DATA, font: { ...NO_DATA.font, color: themeColor("faint") } }],
      };
  window.Plotly.react(node, traces, final, { displayModeBar: false, responsive: true });
}

// Before the charts' nodes leave the page: Plotly keeps a window resize listener for each responsive chart.
export function purgeCharts(container) {
  for (const node of container.querySelectorAll(".report-chart-plot")) window.Plotly.purge(node);
}

function figure(title, kind) {
  const plot = el("div", { class: "report-chart-plot", "data-chart": kind });
  return { node: el("figure", { class: "report-chart" }, el("figcaption", {}, title), plot), plot };
}

function groupBy(rows, key) {
  const groups = new Map();
  for (const row of rows) groups.set(row[key], [...(groups.get(row[key]) || []), row]);
  return groups;
}

// One chart per path the flow's records took (a flow replicating remote topics has a path per origin).
export function latencyCharts(series) {
  const paths = groupBy(series, "path");
  if (!paths.size) {
    const { node, plot } = figure("Latency over time", "latency");
    return { node, draw: () => draw(plot, [], baseLayout()) };
  }
  const charts = [...paths].map(([path, rows]) => {
    const { node, plot } = figure(`Latency of path ${path}`, "latency");
    plot.dataset.path = path;
    const x = rows.map((r) => new Date(r.at));
    const traces = LATENCY_STATS.filter(([key]) => rows.some((r) => typeof r[key] === "number")).map(
      ([key, name, colorName]) => {
        const color = themeColor(colorName);
        return {
          type: "scatter",
          mode: rows.length > 1 ? "lines+markers" : "markers",
          name,
          x,
          y: rows.map((r) => r[key] ?? null),
          line: { color, width: name === "max" ? 1 : 2, dash: name === "max" ? "dot" : "solid" },
          marker: { color, size: 5 },
          hovertemplate: `${name} %{y:,} ms<extra></extra>`,
        };
      },
    );
    return { node, draw: () => draw(plot, traces, baseLayout({ xaxis: timeAxis(), yaxis: valueAxis("ms") })) };
  });
  return {
    node: el(
      "div",
      { class: "report-charts" },
      charts.map((c) => c.node),
    ),
    draw: () => charts.forEach((c) => c.draw()),
  };
}

// Records per window of record time, stacked: complete, missing (lost) and duplicated (replicated twice).
const AUDIT_STACK = [
  ["complete", "complete", "healthy"],
  ["missing", "missing", "failing"],
  ["duplicates", "duplicated", "lagging"],
];

export function auditChart(series) {
  const { node, plot } = figure("Records per window", "audit");
  const x = series.map((r) => new Date(r.window_start));
  const traces = series.length
    ? AUDIT_STACK.map(([key, name, colorName]) => ({
        type: "bar",
        name,
        x,
        y: series.map((r) => r[key] ?? 0),
        marker: { color: themeColor(colorName) },
        hovertemplate: `${name} %{y:,} records<extra></extra>`,
      }))
    : [];
  const layout = baseLayout({ barmode: "stack", bargap: 0.15, xaxis: timeAxis(), yaxis: valueAxis("records") });
  return { node, draw: () => draw(plot, traces, layout) };
}

// Clusters on a circle, links as arrows between them; a link both ways is drawn as two arcs, one on each side.
function positions(nodes) {
  const n = nodes.length;
  return new Map(
    nodes.map((name, i) => {
      const angle = Math.PI / 2 - (2 * Math.PI * i) / n;
      return [name, n === 1 ? [0, 0] : [Math.cos(angle), Math.sin(angle)]];
    }),
  );
}

function linkPath(from, to, bend) {
  const [mx, my] = [(from[0] + to[0]) / 2, (from[1] + to[1]) / 2];
  const [dx, dy] = [to[0] - from[0], to[1] - from[1]];
  return [mx - dy * bend, my + dx * bend]; // the midpoint pushed sideways, to the link's right
}

export function topologyGraph(graph, flowName) {
  const { node, plot } = figure("Topology: clusters and links", "topology");
  const links = graph ? graph.links : [];
  const names = graph ? [...new Set([...graph.nodes, ...links.flatMap((l) => [l.source, l.target])])].sort() : [];
  const at = positions(names);
  const linked = new Set(links.map((l) => `${l.source}\u0000${l.target}`));
  const annotations = [];
  const traces = links.map((l) => {
    const from = at.get(l.source),
      to = at.get(l.target);
    const both = linked.has(`${l.target}\u0000${l.source}`);
    const mid = linkPath(from, to, both ? 0.12 : 0);
    const color = l.dead
      ? themeColor("failing")
      : l.silent || l.unconfigured
        ? themeColor("lagging")
        : themeColor("hop");
    const mine = l.flow === flowName;
    annotations.push({
      x: to[0] * 0.75 + mid[0] * 0.25, // the head stops short of the cluster's marker
      y: to[1] * 0.75 + mid[1] * 0.25,
      ax: mid[0],
      ay: mid[1],
      xref: "x",
      yref: "y",
      axref: "x",
      ayref: "y",
      showarrow: true,
      arrowhead: 2,
      arrowsize: 1.2,
      arrowwidth: mine ? 3 : 1.5,
      arrowcolor: color,
      text: "",
    });
    if (l.dead)
      annotations.push({
        x: mid[0],
        y: mid[1],
        text: `dead: ${l.flow}`,
        showarrow: false,
        font: { color: themeColor("failing"), size: 11 },
        bgcolor: withAlpha(themeColor("panel"), 0.85),
        yshift: 10,
      });
    return {
      type: "scatter",
      mode: "lines",
      name: l.flow,
      x: [from[0], mid[0], to[0]],
      y: [from[1], mid[1], to[1]],
      line: { color, width: mine ? 3 : 1.5, dash: l.dead ? "dot" : "solid", shape: "spline" },
      hovertemplate: `${l.flow}${l.dead ? " (dead)" : l.silent ? " (silent)" : l.unconfigured ? " (not configured)" : ""}<extra></extra>`,
    };
  });
  if (names.length)
    traces.push({
      type: "scatter",
      mode: "markers+text",
      name: "clusters",
      x: names.map((n) => at.get(n)[0]),
      y: names.map((n) => at.get(n)[1]),
      text: names,
      textposition: "top center",
      marker: { size: 16, color: themeColor("node"), line: { color: themeColor("panel"), width: 2 } },
      textfont: { color: themeColor("fg"), size: 12 },
      hovertemplate: "%{text}<extra></extra>",
    });
  const axis = { visible: false, range: [-1.45, 1.45], fixedrange: true };
  const layout = baseLayout({
    height: 280,
    showlegend: false,
    xaxis: axis,
    yaxis: { ...axis, scaleanchor: "x" },
    annotations,
  });
  return { node, draw: () => draw(plot, names.length ? traces : [], layout) };
}
