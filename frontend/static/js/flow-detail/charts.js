// The flow's charts over time (records per second, lag, p99 latency), redrawn when the theme changes.
import { color as themeColor, onThemeChange, withAlpha } from "../palette.js";
import { withGaps } from "./format.js";

export function chart(node, samples, key, colorName, range, emptyText = "No samples yet") {
  const color = themeColor(colorName),
    panel = themeColor("panel");
  const { x, y } = withGaps(samples, key);
  const trace = {
    type: "scatter",
    mode: "lines",
    x,
    y,
    connectgaps: false,
    line: { color, width: 2, shape: "spline", smoothing: 0.3 },
    fill: "tozeroy",
    fillcolor: withAlpha(color, 0.13),
    hoverinfo: "x+y",
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
    annotations: samples.length
      ? []
      : [
          {
            text: emptyText,
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

// The three charts; redrawn from the last samples when the theme changes.
// `range` is the x-axis range [from, to]; `emptyText` what a chart with no samples in it says.
let shown = null;
export function charts(samples, range, emptyText = "No samples yet") {
  shown = [samples, range, emptyText];
  chart(document.getElementById("chart-rps"), samples, "records_per_second", "chart-rps", range, emptyText);
  chart(document.getElementById("chart-lag"), samples, "lag", "chart-lag", range, emptyText);
  chart(document.getElementById("chart-p99"), samples, "latency_p99_ms", "chart-p99", range, emptyText);
}
onThemeChange(() => {
  if (shown) charts(...shown);
});
