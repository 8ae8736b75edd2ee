// /clusters/new/ and /clusters/<id>/: the cluster form, the connectivity test and delete.
import { api, post, ApiError } from "./api.js";
import { collect, disable, fill, showErrors, submit } from "./forms.js";
import { alert, canAdmin, clear, el } from "./dom.js";

const form = document.getElementById("cluster-form");
const id = form.dataset.id;
const result = document.getElementById("check-result");

function brokers(check) {
  return el("div", {},
    alert("ok", `Connected: ${check.brokers.length} broker${check.brokers.length === 1 ? "" : "s"}, ${check.topic_count} topics.`),
    el("table", { class: "data" },
      el("thead", {}, el("tr", {}, el("th", {}, "Broker id"), el("th", {}, "Host"), el("th", { class: "num" }, "Port"))),
      el("tbody", {}, check.brokers.map((b) => el("tr", {}, el("td", {}, b.id), el("td", { class: "mono" }, b.host), el("td", { class: "num" }, b.port))))));
}

async function check() {
  const button = document.getElementById("check");
  button.disabled = true;
  clear(result, el("p", { class: "muted" }, "Connecting…"));
  try {
    const answer = id ? await post(`/api/v1/clusters/${id}/check/`) : await post("/api/v1/clusters/check/", collect(form));
    clear(result, brokers(answer));
  } catch (error) {
    const detail = error instanceof ApiError && error.data && error.data.bootstrap_servers;
    if (error instanceof ApiError && error.status === 400 && !detail) showErrors(form, error.data);
    clear(result, alert("error", detail ? `Cannot connect: ${[].concat(detail).join(" ")}` : error.message));
  } finally {
    button.disabled = false;
  }
}

async function remove() {
  if (!window.confirm("Delete this cluster? Flows that use it must be deleted first.")) return;
  try {
    await api("DELETE", `/api/v1/clusters/${id}/`);
    window.location.assign("/clusters/");
  } catch (error) {
    showErrors(form, { detail: error.message });
  }
}

async function init() {
  if (id) fill(form, await api("GET", `/api/v1/clusters/${id}/`));
  if (!canAdmin()) disable(form);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    submit(form, id ? "PATCH" : "POST", id ? `/api/v1/clusters/${id}/` : "/api/v1/clusters/", () => window.location.assign("/clusters/"));
  });
  document.getElementById("check")?.addEventListener("click", check);
  document.getElementById("delete")?.addEventListener("click", remove);
}

init();
