"""Browser tests: Debian's Chromium driven by Playwright against pytest-django's live server.

Screenshots go to ``artifacts/screenshots/`` (git-ignored), at 1280x800.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from playwright.sync_api import Browser, Page, sync_playwright

from tests.support.celery import celery_env, celery_processes

__all__ = ["celery_env", "celery_processes"]  # fixtures for the tests that need a real worker

# Playwright's sync API runs an event loop in this thread; the ORM calls the tests make are still synchronous.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1280, "height": 800}
SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
PASSWORD = "correct-horse-battery"


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists() or shutil.which("chromium") is None:
        pytest.skip("Debian's chromium is not installed (apt-get install -y chromium)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Browser, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A fresh 1280x800 page; page errors fail the test, and a failing test leaves a screenshot."""
    context = browser.new_context(viewport=VIEWPORT)  # type: ignore[arg-type]
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    # Chromium reports each thing the Content-Security-Policy refused on the console: any one fails the test.
    page.on(
        "console", lambda m: errors.append(f"{page.url}: {m.text}") if "Content Security Policy" in m.text else None
    )
    page.set_default_timeout(15_000)
    yield page
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        shoot(page, f"failed-{request.node.name}")
    context.close()
    assert not errors, f"JavaScript errors or CSP violations on the page: {errors}"


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


def shoot(page: Page, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def make_user(username: str, role: str) -> User:
    user = User.objects.create_user(username=username, password=PASSWORD)
    user.groups.add(Group.objects.get_or_create(name=role)[0])
    return user


def log_in(page: Page, base_url: str, username: str) -> None:
    page.goto(f"{base_url}/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.get_by_role("button", name="Log in").click()
    # The dashboard's full load (Plotly's script) passed the default 15 s in CI while the other test process ran
    # demos and brokers on this 2-core machine (load average 10).
    page.wait_for_url(f"{base_url}/", timeout=60_000)
