// The colour theme: "system" (the default: follows prefers-color-scheme), "light" or "dark", chosen with the
// buttons in the top bar and remembered in localStorage. base.html loads this as a classic, blocking script in
// <head> (an external file: the Content-Security-Policy allows no inline script), so <html data-theme> is set
// before the first paint and a dark page never flashes light. The stylesheet's dark palette keys on data-theme.
// Every change of the resolved theme (a button, the system's setting, another tab) dispatches "themechange" on
// document, which the Plotly pages listen to so their charts redraw in the new colours without a reload.
(() => {
  const KEY = "mirrorplane-theme";
  const CHOICES = ["system", "light", "dark"];
  const root = document.documentElement;
  const system = window.matchMedia("(prefers-color-scheme: dark)");

  function stored() {
    try {
      const value = window.localStorage.getItem(KEY);
      return CHOICES.includes(value) ? value : "system";
    } catch {
      return "system"; // storage disabled: follow the system
    }
  }

  function apply(choice) {
    const theme = choice === "system" ? (system.matches ? "dark" : "light") : choice;
    const changed = root.dataset.theme !== undefined && root.dataset.theme !== theme;
    root.dataset.theme = theme;
    root.dataset.themeChoice = choice;
    for (const button of document.querySelectorAll(".theme-toggle button")) {
      button.setAttribute("aria-pressed", String(button.value === choice));
    }
    if (changed) document.dispatchEvent(new CustomEvent("themechange", { detail: { theme, choice } }));
  }

  function choose(choice) {
    try {
      if (choice === "system") window.localStorage.removeItem(KEY);
      else window.localStorage.setItem(KEY, choice);
    } catch {
      // storage disabled: the choice lasts for this page only
    }
    apply(choice);
  }

  apply(stored());
  system.addEventListener("change", () => apply(root.dataset.themeChoice));
  window.addEventListener("storage", (event) => {
    if (event.key === KEY || event.key === null) apply(stored());
  });
  document.addEventListener("DOMContentLoaded", () => {
    for (const button of document.querySelectorAll(".theme-toggle button")) {
      button.addEventListener("click", () => choose(button.value));
    }
    apply(root.dataset.themeChoice);
  });
})();
