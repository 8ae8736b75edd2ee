// Forms posted to the REST API: inputs to JSON by their data-kind, and the API's field errors back onto fields.
import { api, ApiError } from "./api.js";

export function collect(form) {
  const data = {};
  for (const input of form.querySelectorAll("[data-kind]")) {
    if (input.disabled) continue;
    const kind = input.dataset.kind;
    if (kind === "bool") data[input.name] = input.checked;
    else if (kind === "list")
      data[input.name] = input.value
        .split("\n")
        .map((s) => s.trim())
        .filter(Boolean);
    else if (kind === "number") data[input.name] = input.value.trim() === "" ? null : Number(input.value.trim());
    else if (kind === "password") {
      if (input.value !== "") data[input.name] = input.value;
    } else data[input.name] = input.value;
  }
  for (const [name, value] of Object.entries(data)) {
    // A number that does not parse goes as typed, so the API names the field rather than the UI guessing.
    if (typeof value === "number" && Number.isNaN(value)) data[name] = form.elements[name].value;
  }
  return data;
}

export function fill(form, values) {
  for (const input of form.querySelectorAll("[data-kind]")) {
    if (!(input.name in values)) continue;
    const value = values[input.name];
    const kind = input.dataset.kind;
    if (kind === "bool") input.checked = Boolean(value);
    else if (kind === "list") input.value = (value || []).join("\n");
    else if (kind === "password") input.value = "";
    else input.value = value === null || value === undefined ? "" : value;
  }
}

export function disable(form) {
  for (const input of form.querySelectorAll("input, select, textarea")) input.disabled = true;
}

export function clearErrors(form) {
  for (const box of form.querySelectorAll("[data-errors-for]")) box.textContent = "";
  for (const field of form.querySelectorAll(".field.invalid")) field.classList.remove("invalid");
  const general = form.querySelector("[data-errors-general]");
  if (general) general.textContent = "";
}

function messages(value) {
  if (Array.isArray(value)) return value.map((v) => (typeof v === "object" ? JSON.stringify(v) : String(v)));
  if (value && typeof value === "object")
    return Object.entries(value).map(([k, v]) => `${k}: ${messages(v).join(" ")}`);
  return [String(value)];
}

export function showErrors(form, errors) {
  clearErrors(form);
  const general = form.querySelector("[data-errors-general]");
  const leftover = [];
  for (const [name, value] of Object.entries(errors || {})) {
    const box = form.querySelector(`[data-errors-for="${CSS.escape(name)}"]`);
    if (box) {
      box.textContent = messages(value).join(" ");
      box.closest(".field")?.classList.add("invalid");
      const details = box.closest("details");
      if (details) details.open = true;
    } else {
      leftover.push(
        name === "non_field_errors" || name === "detail"
          ? messages(value).join(" ")
          : `${name}: ${messages(value).join(" ")}`,
      );
    }
  }
  if (general) general.textContent = leftover.join(" ");
  const first = form.querySelector(".field.invalid");
  if (first) first.scrollIntoView({ block: "center", behavior: "instant" });
}

// Submit the form's JSON (plus `extra` values); on success call done(result), on a 400 show field errors.
export async function submit(form, method, url, done, extra = {}) {
  clearErrors(form);
  const button = form.querySelector("button[type=submit]");
  if (button) button.disabled = true;
  try {
    const result = await api(method, url, { ...collect(form), ...extra });
    await done(result);
  } catch (error) {
    if (error instanceof ApiError && error.status === 400 && typeof error.data === "object")
      showErrors(form, error.data);
    else showErrors(form, { detail: error.message });
  } finally {
    if (button) button.disabled = false;
  }
}
