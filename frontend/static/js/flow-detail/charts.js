// The flow's charts over time (records per second, lag, p99 latency), redrawn when the theme changes.
import { onThemeChange } from "../palette.js";
import { chart } from "../timechart.js";

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
