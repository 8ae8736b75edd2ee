// /flows/import/: a MirrorMaker 2 properties file in, clusters and flows out (all or nothing).
import { api, ApiError } from "./api.js";
import { showErrors, clearErrors } from "./forms.js";
import { alert, clear, el } from "./dom.js";

const form = document.getElementById("import-form");
const text = document.getElementById("f-properties");

document.getElementById("file").addEventListener("change", async (event) => {
  const file = event.target.files[0];
  if (file) text.value = await file.text();
});

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  clearErrors(form);
  const result = document.getElementById("result");
  try {
    const created = await api("POST", "/api/v1/flows/import/", { properties: text.value });
    clear(result,
      alert("ok", `Imported ${created.clusters.length} clusters and ${created.flows.length} flows.`),
      el("ul", {}, created.flows.map((f) => el("li", {}, el("a", { href: `/flows/${f.id}/` }, f.name)))));
  } catch (error) {
    if (error instanceof ApiError && error.status === 400) showErrors(form, error.data);
    else showErrors(form, { detail: error.message });
  }
});
