// ESLint (flat config) for the browser's ES modules in frontend/static/js, which are loaded as
// <script type="module"> straight from the static files: no bundler, no transpiler, and for their unit tests in
// tests/js. `make lint` runs it.
import js from "@eslint/js";
import globals from "globals";

export default [
  {
    // Only our own modules and their tests: everything outside frontend/static/js and tests/js is ignored (even for `npx eslint .`), and so is
    // anything vendored or minified (vendor/plotly.min.js is served from the plotly Python package, not this tree).
    ignores: [
      "**",
      "!frontend/",
      "!frontend/static/",
      "!frontend/static/js/",
      "!frontend/static/js/**",
      "!tests/",
      "!tests/js/",
      "!tests/js/**",
      "**/vendor/",
      "**/*.min.js",
    ],
  },
  js.configs.recommended,
  {
    files: ["frontend/static/js/**/*.js"],
    languageOptions: {
      ecmaVersion: "latest",
      sourceType: "module",
      globals: { ...globals.browser },
    },
    linterOptions: { reportUnusedDisableDirectives: "error" },
  },
  {
    // The unit tests of the modules' pure helpers, run by Node's own runner (`node --test tests/js/`).
    files: ["tests/js/**/*.mjs"],
    languageOptions: {
      ecmaVersion: "latest",
      sourceType: "module",
      globals: { ...globals.node },
    },
    linterOptions: { reportUnusedDisableDirectives: "error" },
  },
];
