// Checkpoint freshness: each consumer group's newest checkpoint on the target and its oldest partition's.
import { age, ageOfMillis, alert, clear, el, table, when } from "../dom.js";

export function checkpoints(answer) {
  document.getElementById("checkpoints-at").textContent = answer.at ? `read ${when(answer.at)}` : "";
  const rows = Object.entries(answer.groups).map(([group, c]) =>
    el(
      "tr",
      {},
      el("td", { class: "mono" }, group),
      el("td", { class: "num" }, c.partitions),
      el("td", { class: "num" }, age(ageOfMillis(c.timestamp))),
      el("td", { class: "num" }, age(ageOfMillis(c.oldest))),
    ),
  );
  const headers = [
    "Consumer group",
    { label: "Partitions", num: true },
    { label: "Newest", num: true },
    { label: "Oldest partition", num: true },
  ];
  clear(
    document.getElementById("checkpoints"),
    answer.error ? alert("warn", answer.error) : null,
    table(headers, rows, { empty: "No checkpoints yet for this flow's groups." }),
  );
}
