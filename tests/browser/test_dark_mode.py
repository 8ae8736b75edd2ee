"""Dark mode: the system's preference by default, a three-state toggle in the header that is
remembered across reloads, and the Plotly graph and charts redrawn in the theme's colours without a reload.

Screenshots of the dashboard, a flow page, the failover wizard and the login page in both modes go to
``artifacts/screenshots/theme-<light|dark>-<page>.png`` at 1280x800, for review.
"""

from __future__ import annotations

import re
import uuid
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from playwright.sync_api import Page, Route, expect
from pytest_django.live_server_helper import LiveServer

from controlplane.clusters.models import Cluster
from controlplane.failover.models import Failover
from controlplane.flows.models import Flow
from controlplane.monitoring.models import FlowSample
from tests.browser.conftest import PASSWORD, log_in, shoot
from tests.support.kafka import wait_until

pytestmark = [pytest.mark.kafka, pytest.mark.django_db(transaction=True)]

# The panel colour of each palette (mirrorplane.css): the Plotly paper and plot background.
PANEL = {"light": "#ffffff", "dark": "#171c27"}


def luminance(css_color: str) -> float:
    """Relative luminance (WCAG) of a computed 'rgb(r, g, b)' colour."""
    channels = [int(c) / 255 for c in re.findall(r"\d+", css_color)[:3]]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def body_background(page: Page) -> str:
    return str(page.evaluate("getComputedStyle(document.body).backgroundColor"))


def plotly_background(page: Page, selector: str) -> tuple[str, str] | None:
    """The chart's paper and plot colours, or None before Plotly has drawn it (its data may still be on the way)."""
    layout = page.evaluate(
        f"(() => {{ const e = document.querySelector('{selector}'); const l = e && e.layout; "
        "return l ? [l.paper_bgcolor, l.plot_bgcolor] : null; })()"
    )
    return None if layout is None else (layout[0], layout[1])


def assert_theme(page: Page, theme: str, charts: tuple[str, ...] = ()) -> None:
    expect(page.locator("html")).to_have_attribute("data-theme", theme)
    background = luminance(body_background(page))
    assert (background < 0.05) if theme == "dark" else (background > 0.8), (theme, body_background(page))
    for selector in charts:
        wait_until(
            lambda s=selector: plotly_background(page, s) == (PANEL[theme], PANEL[theme]),
            timeout=10,
            what=f"{selector} drawn on the {theme} panel colour",
        )


def choose(page: Page, label: str) -> None:
    button = page.locator(".theme-toggle button", has_text=label)
    button.click()
    expect(button).to_have_attribute("aria-pressed", "true")


def test_dark_mode_follows_the_system_and_the_toggle_is_remembered_and_redraws_the_charts(
    page: Page, live_server: LiveServer, kafka_clusters: dict[str, str]
) -> None:
    run = uuid.uuid4().hex[:4]
    source = Cluster.objects.create(alias=f"west-{run}", bootstrap_servers=kafka_clusters["us-west"])
    target = Cluster.objects.create(alias=f"east-{run}", bootstrap_servers=kafka_clusters["us-east"])
    flow = Flow.objects.create(source=source, target=target, topics=[f"orders-{run}"], enabled=False)
    now = timezone.now()
    for n in range(30):
        FlowSample.objects.create(
            flow=flow,
            at=now - timedelta(seconds=20 * (30 - n)),
            records=400 * n,
            records_per_second=20.0 + 8 * (n % 7),
            lag=max(0, 120 - 4 * n),
            latency_p99_ms=35.0 + 3 * (n % 5),
            health="healthy",
        )
    admin = User.objects.create_superuser(f"dark-{run}", password=PASSWORD)
    failover = Failover.objects.create(
        mode="planned", source=source, target=target, groups=["billing"], created_by=admin
    )
    base = live_server.url

    # The system prefers dark and nothing was chosen: dark from the first page on, the login page included.
    page.emulate_media(color_scheme="dark")
    page.goto(f"{base}/login/")
    assert_theme(page, "dark")
    expect(page.locator(".theme-toggle button", has_text="Auto")).to_have_attribute("aria-pressed", "true")
    shoot(page, "theme-dark-login")
    log_in(page, base, admin.username)
    expect(page.locator("#graph .main-svg").first).to_be_visible()
    wait_until(
        lambda: flow.name in (page.locator("#graph").get_attribute("data-edges") or ""),
        timeout=15,
        what="the flow's edge on the graph",
    )
    assert_theme(page, "dark", ("#graph",))
    shoot(page, "theme-dark-dashboard")

    # Light, chosen in the header: the page and the open graph switch without a reload, and the choice outlives
    # a reload although the system still prefers dark.
    choose(page, "Light")
    assert_theme(page, "light", ("#graph",))
    page.reload()
    assert_theme(page, "light")
    expect(page.locator(".theme-toggle button", has_text="Light")).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#graph .main-svg").first).to_be_visible()
    wait_until(
        lambda: flow.name in (page.locator("#graph").get_attribute("data-edges") or ""),
        timeout=15,
        what="the flow's edge on the graph",
    )
    assert_theme(page, "light", ("#graph",))
    shoot(page, "theme-light-dashboard")

    charts = ("#chart-rps", "#chart-lag", "#chart-p99")
    page.goto(f"{base}/flows/{flow.pk}/")
    expect(page.locator("#chart-p99 .main-svg").first).to_be_visible()
    assert_theme(page, "light", charts)
    shoot(page, "theme-light-flow")
    choose(page, "Dark")  # the three open charts redraw on the dark panel
    assert_theme(page, "dark", charts)
    grid = page.evaluate("document.querySelector('#chart-lag').layout.yaxis.gridcolor")
    assert grid == "#262d3b"
    shoot(page, "theme-dark-flow")

    page.goto(f"{base}/failover/{failover.pk}/")
    expect(page.locator("#stepper li").first).to_be_visible()
    expect(page.locator("#panel .empty", has_text="Loading")).to_have_count(0)
    assert_theme(page, "dark")
    shoot(page, "theme-dark-wizard")
    choose(page, "Light")
    assert_theme(page, "light")
    shoot(page, "theme-light-wizard")

    # Forms, inputs, validation errors, alerts and tables in both themes (for review; the wizard list's plan form
    # answers an empty submit with field errors and a general alert).
    for theme in ("dark", "light"):
        choose(page, theme.capitalize())
        page.goto(f"{base}/failover/")
        expect(page.locator("#failovers table").first).to_be_visible()
        page.fill("#f-drain_threshold", "-1")
        page.locator("#plan-form button[type=submit]").click()
        expect(page.locator("#plan-form .field.invalid").first).to_be_visible()
        assert_theme(page, theme)
        shoot(page, f"theme-{theme}-failover-list")
        page.goto(f"{base}/flows/{flow.pk}/edit/")
        # No worker runs here: the preview stays queued (its notice is what this page shows).
        expect(page.locator("#flow-form .preview, .preview").first).to_contain_text("Queued")
        shoot(page, f"theme-{theme}-flow-form")
    choose(page, "Dark")

    # Auto again: the stored choice is dropped, and the page follows the system, now light as well as dark.
    choose(page, "Auto")
    assert_theme(page, "dark")
    assert page.evaluate("localStorage.getItem('mirrorplane-theme')") is None
    page.emulate_media(color_scheme="light")
    assert_theme(page, "light")

    page.context.clear_cookies()
    page.goto(f"{base}/login/")
    assert_theme(page, "light")
    shoot(page, "theme-light-login")


def contrast(a: str, b: str) -> float:
    """WCAG contrast ratio of two '#rrggbb' colours."""
    la, lb = (luminance(",".join(str(int(c[i : i + 2], 16)) for i in (1, 3, 5))) for c in (a, b))
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def fabricated_dashboard(route: Route) -> None:
    """The real answer, with six clusters and an edge in each health: what the graph looks like in colour. (No
    reverse pair of flows: positions() puts every cluster downstream of a cycle in one column.)"""
    answer = route.fetch().json()
    nodes = ["us-west", "us-east", "backup", "eu-central", "dr", "archive"]
    answer["nodes"] = [
        {"id": i, "alias": a, "url": "", "reachable": a != "archive", "topic_count": 4, "error": ""}
        for i, a in enumerate(nodes)
    ]
    edges = [
        ("us-west", "us-east", "healthy", False, 0),
        ("us-east", "backup", "failing", False, 0),
        ("us-east", "dr", "lagging", False, 0),
        ("us-west", "eu-central", "starting", False, 0),
        ("eu-central", "dr", "healthy", True, 0),  # paused
        ("backup", "archive", "starting", False, 2),  # tasks unplaced
    ]
    answer["edges"] = [
        {
            "id": i,
            "name": f"{s}->{t}",
            "url": "",
            "source": s,
            "target": t,
            "health": health,
            "paused": paused,
            "records_per_second": 0.0 if paused else 840.0 - 100 * i,
            "lag": 12 * i,
            "latency_p99_ms": 40.0 + 30 * i,
            "errors": [],
            "unplaced": unplaced,
            "unplaced_reason": "",
        }
        for i, (s, t, health, paused, unplaced) in enumerate(edges)
    ]
    answer["hops"] = [{"source": "us-west", "target": "backup", "hops": 2}]
    route.fulfill(json=answer)


def test_the_graph_keeps_its_health_colours_apart_and_readable_in_both_themes(
    page: Page, live_server: LiveServer
) -> None:
    User.objects.create_superuser("graph-colours", password=PASSWORD)
    page.route("**/api/v1/dashboard/", fabricated_dashboard)
    log_in(page, live_server.url, "graph-colours")
    for theme in ("light", "dark"):
        choose(page, theme.capitalize())
        assert_theme(page, theme, ("#graph",))
        expect(page.locator("#graph .annotation-text", has_text="UNPLACED")).to_be_visible()
        layout = page.evaluate(
            "(() => { const g = document.querySelector('#graph'); return {"
            " edges: g.layout.shapes.map((s) => s.line.color), nodes: g.data[0].marker.color,"
            " labels: g.layout.annotations.filter((a) => a.text).map((a) => [a.font.color, a.bgcolor]),"
            " names: g.data[0].textfont.color }; })()"
        )
        panel = PANEL[theme]
        # healthy, lagging, failing, starting, paused, unplaced and the dotted hop: seven colours, all different.
        assert len(set(layout["edges"])) == 7, layout["edges"]
        for color in layout["edges"] + layout["nodes"]:
            assert contrast(color, panel) >= 3, (theme, color)
        for font, background in layout["labels"]:
            assert background == panel and contrast(font, background) >= 7, (theme, font, background)
        assert contrast(layout["names"], panel) >= 7
        shoot(page, f"theme-{theme}-graph-health")
