// A line chart over time (Plotly), in the theme's colours: the flow page's and the dashboard's charts.
import { color as themeColor, withAlpha } from "./palette.js";
import { withGaps } from "./flow-detail/format.js";

// `range` is the x-axis range [from, to]; `emptyText` what a chart with no samples in it says; `hoverText`, one
// string per sample, is shown beside the value. Samples that all lack the value chart "No data".
export function chart(node, samples, key, colorName, range, emptyText = "No samples yet", hoverText = null) {
  const color = themeColor(colorName),
    panel = themeColor("panel");
  const { x, y, at } = withGaps(samples, key);
  const trace = {
    type: "scatter",
    mode: "lines",
    x,
    y,
    connectgaps: false,
    line: { color, width: 2, shape: "spline", smoothing: 0.3 },
    fill: "tozeroy",
    fillcolor: withAlpha(color, 0.13),
    hoverinfo: hoverText ? "x+y+text" : "x+y",
    text: hoverText ? at.map((i) => (i === null ? "" : hoverText[i])) : undefined,
  };
  const layout = {
    margin: { l: 48, r: 10, t: 6, b: 30 },
    height: 200,
    showlegend: false,
    paper_bgcolor: panel,
    plot_bgcolor: panel,
    xaxis: {
      type: "date",
      showgrid: false,
      linecolor: themeColor("line"),
      tickfont: { size: 10 },
      nticks: 6,
      range,
    },
    yaxis: {
      rangemode: "tozero",
      gridcolor: themeColor("grid"),
      zerolinecolor: themeColor("line"),
      tickfont: { size: 10 },
      nticks: 5,
    },
    font: { family: "system-ui, sans-serif", color: themeColor("muted") },
    hoverlabel: { bgcolor: panel, bordercolor: color, font: { color: themeColor("fg") } },
    annotations: y.some((v) => v !== null && v !== undefined)
      ? []
      : [
          {
            text: samples.length ? "No data" : emptyText,
            showarrow: false,
            xref: "paper",
            yref: "paper",
            x: 0.5,
            y: 0.5,
            font: { color: themeColor("faint") },
          },
        ],
  };
  window.Plotly.react(node, [trace], layout, { displayModeBar: false, responsive: true });
}
