// /clusters/new/ and /clusters/<id>/: the cluster form, the connectivity test and delete.
import { api, ApiError } from "./api.js";
import { collect, disable, fill, showErrors, submit } from "./forms.js";
import { alert, banner, canAdmin, clear, el } from "./dom.js";
import { progress, runJob } from "./jobs.js";

const form = document.getElementById("cluster-form");
const id = form.dataset.id;
const result = document.getElementById("check-result");

function brokers(check) {
  return el(
    "div",
    {},
    alert(
      "ok",
      `Connected: ${check.brokers.length} broker${check.brokers.length === 1 ? "" : "s"}, ${check.topic_count} topics.`,
    ),
    el(
      "table",
      { class: "data" },
      el(
        "thead",
        {},
        el("tr", {}, el("th", {}, "Broker id"), el("th", {}, "Host"), el("th", { class: "num" }, "Port")),
      ),
      el(
        "tbody",
        {},
        check.brokers.map((b) =>
          el("tr", {}, el("td", {}, b.id), el("td", { class: "mono" }, b.host), el("td", { class: "num" }, b.port)),
        ),
      ),
    ),
  );
}

// The check is a background job: the POST answers at once, the job is polled until it ends. Its progress and
// outcome show in the result box; an error (the start refused, or polling failing) is the box's one banner.
async function check() {
  const button = document.getElementById("check");
  button.disabled = true;
  clear(result, el("p", { class: "muted", "data-job": "starting" }, "Starting the check…"));
  const hooks = {
    onState: (job) => {
      if (!["succeeded", "failed"].includes(job.state))
        clear(result, el("p", { class: "muted", "data-job": job.state }, progress(job)));
    },
    onError: (error, delay) => banner(result, "error", `${error.message} Retrying in ${Math.round(delay / 1000)} s.`),
    onRecover: () => banner(result, "error", null),
  };
  try {
    const url = id ? `/api/v1/clusters/${id}/check/` : "/api/v1/clusters/check/";
    const job = await runJob(url, id ? {} : collect(form), hooks);
    if (job.state === "succeeded") clear(result, brokers(job.result));
    else clear(result, alert("error", `${job.started_at ? "Cannot connect" : "The check did not run"}: ${job.error}`));
  } catch (error) {
    const detail = error instanceof ApiError && error.data && error.data.bootstrap_servers;
    if (error instanceof ApiError && error.status === 400 && !detail) showErrors(form, error.data);
    clear(result);
    banner(result, "error", detail ? `Cannot check: ${[].concat(detail).join(" ")}` : error.message);
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
    submit(form, id ? "PATCH" : "POST", id ? `/api/v1/clusters/${id}/` : "/api/v1/clusters/", () =>
      window.location.assign("/clusters/"),
    );
  });
  const checkButton = document.getElementById("check");
  checkButton?.addEventListener("click", check);
  if (checkButton) checkButton.disabled = false; // rendered disabled: a click before this module ran did nothing
  document.getElementById("delete")?.addEventListener("click", remove);
}

init();
