// The theme's colours for Plotly, read from the stylesheet's custom properties (mirrorplane.css holds the light
// and the dark palette; theme.js picks one), so the graph and the charts never hard-code a colour of their own.

export function color(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(`--${name}`).trim();
}

// "#rrggbb" with an opacity, as rgba() (Plotly's fills).
export function withAlpha(hex, alpha) {
  const n = parseInt(hex.replace("#", ""), 16);
  return `rgba(${(n >> 16) & 255},${(n >> 8) & 255},${n & 255},${alpha})`;
}

// Calls draw() whenever the theme changes (the header's buttons, the system's setting, another tab).
export function onThemeChange(draw) {
  document.addEventListener("themechange", () => draw());
}
