"""The replication graph stays legible as it grows: at the demo's three clusters, at six flows and at eight
clusters with twenty flows (chains over several ranks, opposite pairs, fan-in and fan-out), the geometry Chromium
rendered has no edge label over a cluster's marker or name, no two labels over each other, no edge through a
cluster it does not join, and each label on its own edge and no other; opposite flows are distinct curves, and the
clusters spread over the canvas.

Screenshots of the graph at 5 and 20 flows, light and dark: ``artifacts/screenshots/graph-layout-<n>-<theme>.png``.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from tests.browser.conftest import SCREENSHOTS, log_in, make_user
from tests.support.kafka import wait_until

pytestmark = pytest.mark.django_db(transaction=True)

Pair = tuple[str, str]

# The demo's shape: a chain us-west -> us-east -> backup and the direct us-west -> backup, which is paused.
DEMO: list[Pair] = [("us-west", "us-east"), ("us-east", "backup"), ("us-west", "backup")]
FIVE: list[Pair] = [*DEMO, ("us-east", "us-west"), ("eu-west", "us-east")]
SIX: list[Pair] = [*FIVE, ("us-west", "eu-west")]
# Eight clusters: the chain ap-south -> us-west -> us-east -> backup -> archive, opposite pairs (us-west/us-east,
# eu-west/eu-central, ap-south/backup: a cycle over four ranks), fan-out from ap-south, fan-in to analytics and
# backup.
TWENTY: list[Pair] = [
    *DEMO,
    ("us-east", "us-west"),
    ("eu-west", "eu-central"),
    ("eu-central", "eu-west"),
    ("eu-central", "archive"),
    ("eu-west", "us-east"),
    ("ap-south", "us-west"),
    ("ap-south", "eu-west"),
    ("ap-south", "analytics"),
    ("us-west", "analytics"),
    ("us-east", "analytics"),
    ("eu-central", "analytics"),
    ("backup", "archive"),
    ("analytics", "archive"),
    ("us-west", "eu-central"),
    ("ap-south", "backup"),
    ("eu-west", "backup"),
    ("backup", "ap-south"),
]
PAUSED = {("us-west", "backup")}
DISABLED = {("eu-central", "eu-west"), ("backup", "ap-south")}

# Reads everything in one synchronous evaluation, so a redraw cannot land between two reads. Boxes are in viewport
# pixels, and so is each edge: its path sampled every few pixels along its length, through its screen matrix.
GEOMETRY = """() => {
  const graph = document.getElementById("graph");
  const box = (r) => ({ l: r.left, t: r.top, r: r.right, b: r.bottom });
  const markers = [...graph.querySelectorAll(".scatterlayer .points path.point")];
  const names = [...graph.querySelectorAll(".scatterlayer .textpoint text")];
  const labels = [...graph.querySelectorAll("g.annotation")].filter((a) => a.textContent.trim());
  const edges = [...graph.querySelectorAll(".shapelayer path")].filter((p) => !/z\\s*$/i.test(p.getAttribute("d")));
  return {
    graph: box(graph.getBoundingClientRect()),
    nodes: markers.map((m, i) => ({ marker: box(m.getBoundingClientRect()), name: names[i].textContent,
                                    text: box(names[i].getBoundingClientRect()) })),
    labels: labels.map((a) => ({ text: a.textContent, box: box(a.querySelector("rect.bg").getBoundingClientRect()) })),
    edges: edges.map((p) => {
      const m = p.getScreenCTM(), n = p.getTotalLength(), steps = Math.max(20, Math.ceil(n / 3)), points = [];
      for (let i = 0; i <= steps; i += 1) {
        const q = new DOMPoint(p.getPointAtLength((n * i) / steps).x, p.getPointAtLength((n * i) / steps).y);
        const s = q.matrixTransform(m);
        points.push([s.x, s.y]);
      }
      return points;
    }),
  };
}"""


def seed(pairs: list[Pair]) -> dict[Pair, Flow]:
    aliases = sorted({alias for pair in pairs for alias in pair})
    # Unroutable addresses: the dashboard reads the database only, nothing dials a cluster.
    clusters = {
        a: Cluster.objects.create(alias=a, bootstrap_servers=f"10.255.0.{i + 1}:9092") for i, a in enumerate(aliases)
    }
    return {
        (s, t): Flow.objects.create(
            source=clusters[s],
            target=clusters[t],
            topics=["orders"],
            paused=(s, t) in PAUSED,
            enabled=(s, t) not in DISABLED,
        )
        for s, t in pairs
    }


def open_graph(page: Page, live_server: LiveServer, pairs: list[Pair]) -> None:
    make_user("graph-viewer", "viewer")
    log_in(page, live_server.url, "graph-viewer")
    wait_until(
        lambda: len(json.loads(page.locator("#graph").get_attribute("data-edges") or "[]")) == len(pairs),
        timeout=30,
        what=f"{len(pairs)} edges on the graph",
    )
    expect(page.locator("#graph g.annotation").filter(has_text="lag")).to_have_count(len(pairs))


def overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return a["l"] < b["r"] and b["l"] < a["r"] and a["t"] < b["b"] and b["t"] < a["b"]


def centre(box: dict[str, float]) -> tuple[float, float]:
    return (box["l"] + box["r"]) / 2, (box["t"] + box["b"]) / 2


def assert_legible(page: Page, pairs: list[Pair]) -> dict[str, Any]:
    g = page.evaluate(GEOMETRY)
    nodes, labels, edges = g["nodes"], g["labels"], g["edges"]
    assert sorted(n["name"] for n in nodes) == sorted({a for p in pairs for a in p})
    assert len(labels) == len(pairs) and len(edges) == len(pairs), (len(labels), len(edges))

    for label in labels:
        for node in nodes:
            for part in ("marker", "text"):
                assert not overlap(label["box"], node[part]), f"label {label['text']!r} covers {node['name']}'s {part}"
        assert g["graph"]["l"] <= label["box"]["l"] and label["box"]["r"] <= g["graph"]["r"], label
    for i, a in enumerate(labels):
        for b in labels[i + 1 :]:
            assert not overlap(a["box"], b["box"]), f"labels {a['text']!r} and {b['text']!r} overlap"

    centres = {n["name"]: centre(n["marker"]) for n in nodes}
    radius = {n["name"]: (n["marker"]["r"] - n["marker"]["l"]) / 2 for n in nodes}
    joined: list[Pair] = []
    for points in edges:
        ends = [min(centres, key=lambda a, p=p: math.dist(centres[a], p)) for p in (points[0], points[-1])]
        joined.append((ends[0], ends[1]))
        for alias, c in centres.items():
            if alias in ends:
                continue
            nearest = min(math.dist(c, p) for p in points)
            assert nearest > radius[alias], f"edge {ends[0]}->{ends[1]} passes {nearest:.0f}px from {alias}'s centre"
    assert sorted(joined) == sorted(pairs), "each edge starts at its source's marker and ends at its target's"

    # A label sits on its own edge and no other edge runs under it, so no label reads as another flow's.
    for label in labels:
        b = label["box"]
        under = [
            i
            for i, points in enumerate(edges)
            if any(b["l"] + 2 < x < b["r"] - 2 and b["t"] + 2 < y < b["b"] - 2 for x, y in points)
        ]
        assert len(under) == 1, f"label {label['text']!r} lies on {len(under)} edges: {[joined[i] for i in under]}"

    # Opposite flows are two curves: their middles lie apart.
    for (s, t), points in zip(joined, edges, strict=True):
        if (t, s) in joined:
            other = edges[joined.index((t, s))]
            gap = math.dist(points[len(points) // 2], other[len(other) // 2])
            assert gap > 20, f"{s}->{t} and {t}->{s} share a curve ({gap:.0f}px apart at their middles)"

    xs = [c[0] for c in centres.values()]
    width = g["graph"]["r"] - g["graph"]["l"]
    assert max(xs) - min(xs) > 0.6 * width, "the clusters spread across the canvas"
    return dict(g)


def shoot_graph(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("section.card.flush").screenshot(path=str(SCREENSHOTS / f"{name}.png"))


def choose_theme(page: Page, label: str, count: int) -> None:
    button = page.locator(".theme-toggle button", has_text=label)
    button.click()
    expect(button).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#graph g.annotation").filter(has_text="lag")).to_have_count(count)


@pytest.mark.parametrize("pairs", [DEMO, SIX], ids=["demo-3", "six"])
def test_a_small_graph_keeps_labels_off_nodes_and_edges_clear_of_other_clusters(
    page: Page, live_server: LiveServer, pairs: list[Pair]
) -> None:
    seed(pairs)
    open_graph(page, live_server, pairs)
    assert_legible(page, pairs)


def test_five_flows_read_the_same_in_light_and_dark(page: Page, live_server: LiveServer) -> None:
    seed(FIVE)
    open_graph(page, live_server, FIVE)
    for theme in ("Light", "Dark"):
        choose_theme(page, theme, len(FIVE))
        assert_legible(page, FIVE)
        shoot_graph(page, f"graph-layout-5-{theme.lower()}")


def test_twenty_flows_on_eight_clusters_stay_legible_and_a_label_opens_its_flow(
    page: Page, live_server: LiveServer
) -> None:
    flows = seed(TWENTY)
    open_graph(page, live_server, TWENTY)
    for theme in ("Light", "Dark"):
        choose_theme(page, theme, len(TWENTY))
        assert_legible(page, TWENTY)
        shoot_graph(page, f"graph-layout-20-{theme.lower()}")

    # A narrower window is a new layout at its width (fewer ranks, taller), not the old one squeezed.
    page.set_viewport_size({"width": 900, "height": 800})
    wait_until(
        lambda: page.evaluate(
            "(() => { const g = document.getElementById('graph');"
            " return Math.abs(g.querySelector('.main-svg').getBoundingClientRect().width - g.clientWidth) < 2; })()"
        ),
        timeout=10,
        what="the graph laid out again at the window's new width",
    )
    assert_legible(page, TWENTY)

    page.locator("#graph g.annotation").filter(has_text="PAUSED").click()
    page.wait_for_url(f"{live_server.url}/flows/{flows[('us-west', 'backup')].pk}/")
