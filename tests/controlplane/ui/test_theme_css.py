"""The light and dark palettes of dark mode: every colour the UI paints is a custom property of both.

mirrorplane.css declares the dark palette twice, for ``<html data-theme="dark">`` (theme.js, the header's toggle)
and for the system's preference when no script ran; the JavaScript reads colours from those properties and writes
none of its own.
"""

from __future__ import annotations

import re
from pathlib import Path

FRONTEND = Path(__file__).resolve().parents[3] / "frontend"
CSS = (FRONTEND / "static" / "css" / "mirrorplane.css").read_text()
COLOR = re.compile(r"#[0-9a-fA-F]{3,8}\b|\brgba?\(|\bhsla?\(")
PROPERTY = re.compile(r"^\s*(--[\w-]+):\s*([^;]+);", re.MULTILINE)


def block(opening: str) -> str:
    start = CSS.index(opening) + len(opening)
    return CSS[start : CSS.index("}", start)]


def properties(text: str) -> dict[str, str]:
    return dict(PROPERTY.findall(text))


def test_the_dark_palette_is_the_same_for_the_toggle_and_for_the_system_preference() -> None:
    toggled = properties(block(':root[data-theme="dark"] {'))
    system = properties(block("@media (prefers-color-scheme: dark) {\n  :root:not([data-theme]) {"))
    assert toggled and toggled == system


def test_both_palettes_define_every_colour_and_no_rule_hard_codes_one() -> None:
    light = {name: value for name, value in properties(block(":root {")).items() if COLOR.search(value)}
    dark = properties(block(':root[data-theme="dark"] {'))
    assert set(dark) == set(light), set(dark) ^ set(light)
    # Outside the three palette blocks, colours come only from var(--...).
    rules = CSS[CSS.index("* { box-sizing") :]
    assert not COLOR.findall(rules), [line for line in rules.splitlines() if COLOR.search(line)]
    used = set(re.findall(r"var\((--[\w-]+)\)", rules))
    assert used <= set(properties(block(":root {"))), used - set(properties(block(":root {")))


def test_the_scripts_take_their_colours_from_the_palette() -> None:
    for script in sorted((FRONTEND / "static" / "js").glob("*.js")):
        if script.name != "palette.js":  # it reads the properties, and turns "#rrggbb" into rgba() for fills
            assert not COLOR.findall(script.read_text()), f"{script.name} hard-codes a colour"
    names = set(
        re.findall(
            r'(?:themeColor|color)\("([\w-]+)"\)',
            "".join(p.read_text() for p in (FRONTEND / "static" / "js").glob("*.js")),
        )
    )
    assert names and {f"--{name}" for name in names} <= set(properties(block(':root[data-theme="dark"] {'))), names


def test_the_theme_is_set_before_the_first_paint_by_a_blocking_external_script() -> None:
    """No flash of the wrong theme: theme.js runs in <head>, before the stylesheet applies and before <body> is
    parsed (no defer, async or type=module, which would run it after the first paint); external, for the CSP."""
    base = (FRONTEND / "templates" / "base.html").read_text()
    head = base[: base.index("</head>")]
    tag = re.search(r"<script[^>]*theme\.js[^>]*>", head)
    assert tag, "theme.js is not loaded in <head>"
    assert not re.search(r"\b(defer|async|type=)", tag.group(0)), tag.group(0)
    assert head.index(tag.group(0)) < head.index("css/mirrorplane.css")
    assert "<script>" not in base


def contrast(a: str, b: str) -> float:
    def luminance(color: str) -> float:
        channels = [int(color[i : i + 2], 16) / 255 for i in (1, 3, 5)]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_health_keeps_its_meaning_in_both_palettes() -> None:
    """Each health colour stands out from the panel it is drawn on (3:1, a graph line) and from the other health
    colours, and a badge's text is readable on it (4.4:1; lagging and disabled, light fills, take dark text)."""
    for opening in (":root {", ':root[data-theme="dark"] {'):
        palette = properties(block(opening))
        on_status = {"lagging": "--on-bright", "disabled": "--on-bright"}
        statuses = ("healthy", "lagging", "starting", "failing", "paused", "disabled", "unplaced")
        assert len({palette[f"--{s}"] for s in statuses}) == len(statuses), opening
        for status in statuses:
            fill = palette[f"--{status}"]
            assert contrast(fill, palette["--panel"]) >= 3, (opening, status)
            text = palette[on_status.get(status, "--on-status")]
            assert contrast(text, fill) >= 4.4, (opening, status, text, fill)
        assert contrast(palette["--hop"], palette["--panel"]) >= 3, opening
        for text in ("--fg", "--muted"):
            assert contrast(palette[text], palette["--panel"]) >= 4.5, (opening, text)
            assert contrast(palette[text], palette["--bg"]) >= 4.5, (opening, text)
