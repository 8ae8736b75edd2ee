// /alerts/: the rules (operators create, edit and delete them) and the notification targets (admins create, edit
// and delete them, and send a test notification to one).
import { api, get, post } from "./api.js";
import { alert, badge, canAdmin, canOperate, clear, el, table, when } from "./dom.js";
import { clearErrors, fill, submit } from "./forms.js";
import { CHOICES, checkbox, errorsBox, field, input, kindLabel, lookups, select } from "./alert-forms.js";

function actions(...buttons) {
  return el(
    "td",
    { class: "nowrap" },
    buttons.filter(Boolean).flatMap((b) => [b, " "]),
  );
}

const button = (label, onclick, cls = "btn") => el("button", { class: cls, type: "button", onclick }, label);

async function remove(url, what, reload) {
  if (!window.confirm(`Delete ${what}?`)) return;
  await api("DELETE", url);
  await reload();
}

// An editor: a form that creates, or saves the row being edited (PATCH), then reloads the list.
function editor(form, base, title, reload, build) {
  let editing = null;
  const heading = el("h3", {}, `New ${title}`);
  const cancel = button("Cancel", () => start(null));
  const save = el("button", { class: "btn primary", type: "submit" }, `Create ${title}`);
  function start(row) {
    editing = row;
    form.reset();
    clearErrors(form);
    heading.textContent = row ? `Edit ${title} ${row.name || row.id}` : `New ${title}`;
    save.textContent = row ? "Save changes" : `Create ${title}`;
    cancel.hidden = !row;
    if (row) {
      fill(form, row);
      form.scrollIntoView({ block: "center", behavior: "instant" });
    }
  }
  clear(form, heading, errorsBox(), build(), save, " ", cancel);
  cancel.hidden = true;
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const [method, url] = editing ? ["PATCH", `${base}${editing.id}/`] : ["POST", base];
    submit(form, method, url, async () => {
      start(null);
      await reload();
    });
  });
  return start;
}

// Rules
const ruleList = document.getElementById("rule-list");
const ruleForm = document.getElementById("rule-form");
let editRule = () => {};

async function loadRules() {
  const [rules, names] = await Promise.all([get("/api/v1/alert-rules/"), lookups()]);
  const rows = (rules.results || rules).map((r) =>
    el(
      "tr",
      { "data-rule": r.id },
      el("td", {}, kindLabel(r.kind)),
      el("td", {}, r.flow ? names.flows.get(r.flow) || `flow ${r.flow}` : "default (all flows)"),
      el("td", { class: "num" }, r.threshold),
      el("td", { class: "num" }, `${r.for_seconds} s`),
      el("td", {}, r.enabled ? badge("healthy", "enabled") : badge("disabled", "disabled")),
      canOperate()
        ? actions(
            button("Edit", () => editRule(r)),
            button("Delete", () => remove(`/api/v1/alert-rules/${r.id}/`, "this rule", loadRules), "btn danger"),
          )
        : el("td"),
    ),
  );
  clear(
    ruleList,
    table(["Kind", "Flow", { label: "Above", num: true }, { label: "For", num: true }, "State", ""], rows, {
      empty: "No rules.",
    }),
  );
}

async function buildRuleForm() {
  const names = await lookups();
  editRule = editor(ruleForm, "/api/v1/alert-rules/", "rule", loadRules, () =>
    el(
      "div",
      { class: "grid2" },
      field("Kind", "kind", select("kind", CHOICES.kinds)),
      field("Flow", "flow", select("flow", [["", "default (all flows)"], ...names.flows], "number")),
      field("Fires above", "threshold", input("threshold", "number")),
      field("For (seconds)", "for_seconds", input("for_seconds", "number", { value: "60" })),
      checkbox("enabled", "Enabled"),
    ),
  );
}

// Targets
const targetList = document.getElementById("target-list");
const targetForm = document.getElementById("target-form");
const targetResult = document.getElementById("target-result");
let editTarget = () => {};

function where(t) {
  return t.kind === "email" ? (t.recipients || []).join(", ") : t.url_origin;
}

function lastResult(t) {
  if (!("last_error" in t) || !t.last_sent_at) return "–";
  const outcome = t.last_error
    ? badge("failing", t.last_error)
    : badge("healthy", t.last_status ? `HTTP ${t.last_status}` : "sent");
  return el("span", {}, outcome, " ", el("span", { class: "muted" }, when(t.last_sent_at)));
}

async function sendTest(t) {
  clear(targetResult, alert("info", `Sending a test notification to ${t.name}…`));
  try {
    const result = await post(`/api/v1/alert-webhooks/${t.id}/test/`);
    const status = result.status ? ` (HTTP ${result.status})` : "";
    clear(
      targetResult,
      result.delivered
        ? alert("ok", `Test notification delivered to ${t.name}${status}.`)
        : alert("error", `Test notification to ${t.name} failed: ${result.error}`),
    );
  } catch (error) {
    clear(targetResult, alert("error", error.message));
  }
  await loadTargets();
}

async function loadTargets() {
  const targets = await get("/api/v1/alert-webhooks/");
  const rows = (targets.results || targets).map((t) =>
    el(
      "tr",
      { "data-target": t.id, "data-name": t.name },
      el("td", {}, t.name),
      el("td", {}, t.kind),
      el("td", {}, where(t)),
      el("td", {}, t.enabled ? badge("healthy", "enabled") : badge("disabled", "disabled")),
      el("td", {}, lastResult(t)),
      canAdmin()
        ? actions(
            button("Send test", () => sendTest(t)),
            button("Edit", () => editTarget(t)),
            button(
              "Delete",
              () => remove(`/api/v1/alert-webhooks/${t.id}/`, `target ${t.name}`, loadTargets),
              "btn danger",
            ),
          )
        : el("td"),
    ),
  );
  clear(
    targetList,
    table(["Name", "Kind", "Where", "State", "Last delivery", ""], rows, {
      empty: "No targets: alerts are only shown here.",
    }),
  );
}

function buildTargetForm() {
  editTarget = editor(targetForm, "/api/v1/alert-webhooks/", "target", loadTargets, () =>
    el(
      "div",
      { class: "grid2" },
      field("Name", "name", input("name")),
      field("Kind", "kind", select("kind", CHOICES.targetKinds)),
      field("URL (webhook and Slack; kept secret, blank keeps the stored one)", "url", input("url", "password")),
      field(
        "Recipients (e-mail, one per line)",
        "recipients",
        el("textarea", { name: "recipients", "data-kind": "list", rows: 2 }),
      ),
      checkbox("enabled", "Enabled"),
    ),
  );
}

loadRules().catch((error) => clear(ruleList, alert("error", error.message)));
loadTargets().catch((error) => clear(targetList, alert("error", error.message)));
if (ruleForm) buildRuleForm().catch((error) => clear(ruleForm, alert("error", error.message)));
if (targetForm) buildTargetForm();
