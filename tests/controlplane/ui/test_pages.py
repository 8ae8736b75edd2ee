"""Every page through the one Page view: who may see it, what a missing object answers, and its template."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.test import Client

from controlplane.clusters.models import Cluster
from controlplane.failover.models import Failover
from controlplane.flows.models import Flow
from tests.controlplane.api.base import ROLES, make_user

pytestmark = pytest.mark.django_db

VIEWER_PAGES = [
    "/",
    "/clusters/",
    "/clusters/{cluster}/",
    "/clusters/{cluster}/browse/",
    "/flows/",
    "/flows/{flow}/",
    "/failover/",
    "/failover/{fo}/",
    "/alerts/",
]
ADMIN_PAGES = ["/clusters/new/", "/flows/new/", "/flows/import/", "/flows/{flow}/edit/"]


@pytest.fixture
def browser() -> Callable[[str | None], Client]:
    """A browser session (the pages take no API token): browser("viewer"), ..., browser("nobody"), browser(None)."""

    users: dict[str, User] = {}

    def build(role: str | None) -> Client:
        client = Client()
        if role is not None:
            if role not in users:
                users[role] = make_user(f"{role}-page-user", role if role in ROLES else None)
            client.force_login(users[role])
        return client

    return build


@pytest.fixture
def ids() -> dict[str, int]:
    west = Cluster.objects.create(alias="west", bootstrap_servers="127.0.0.1:1")
    east = Cluster.objects.create(alias="east", bootstrap_servers="127.0.0.1:2")
    flow = Flow.objects.create(source=west, target=east)
    failover = Failover.objects.create(mode="planned", source=west, target=east, groups=["orders-app"])
    return {"cluster": west.pk, "flow": flow.pk, "fo": failover.pk}


@pytest.mark.parametrize("page", VIEWER_PAGES + ADMIN_PAGES)
def test_anonymous_users_are_sent_to_the_login_page(
    browser: Callable[[str | None], Client], ids: dict[str, int], page: str
) -> None:
    url = page.format(**ids)
    response = browser(None).get(url)
    assert response.status_code == 302
    assert response["Location"] == f"/login/?next={url}"


@pytest.mark.parametrize("page", VIEWER_PAGES + ADMIN_PAGES)
def test_a_user_without_a_role_sees_no_page(
    browser: Callable[[str | None], Client], ids: dict[str, int], page: str
) -> None:
    assert browser("nobody").get(page.format(**ids)).status_code == 403


@pytest.mark.parametrize("page", VIEWER_PAGES)
def test_a_viewer_sees_the_viewer_pages_with_their_object(
    browser: Callable[[str | None], Client], ids: dict[str, int], page: str
) -> None:
    response = browser("viewer").get(page.format(**ids))
    assert response.status_code == 200
    if "{flow}" in page:
        assert response.context["flow"].pk == ids["flow"]
    if "{cluster}" in page:
        assert response.context["cluster"].pk == ids["cluster"]
    if "{fo}" in page:
        assert response.context["failover"].pk == ids["fo"]
        assert response.context["operator"] is False


@pytest.mark.parametrize("page", ADMIN_PAGES)
def test_only_an_admin_sees_the_admin_pages(
    browser: Callable[[str | None], Client], ids: dict[str, int], page: str
) -> None:
    url = page.format(**ids)
    assert browser("operator").get(url).status_code == 403
    response = browser("admin").get(url)
    assert response.status_code == 200
    assert response.context["nav"] in ("clusters", "flows")


def test_a_missing_object_is_404_and_a_new_page_has_none(
    browser: Callable[[str | None], Client], ids: dict[str, int]
) -> None:
    assert browser("viewer").get("/flows/99999/").status_code == 404
    assert browser("viewer").get("/clusters/99999/browse/").status_code == 404
    assert browser("admin").get("/flows/99999/edit/").status_code == 404
    new = browser("admin").get("/flows/new/")
    assert new.context["flow"] is None
    assert new.context["has_clusters"] is True
    assert [s for s in new.context["sections"]]


def test_pages_answer_get_only(browser: Callable[[str | None], Client], ids: dict[str, int]) -> None:
    assert browser("admin").post("/flows/new/").status_code == 405


@pytest.mark.django_db
def test_the_failover_plan_starts_on_the_first_flows_clusters(browser: Callable[[str | None], Client]) -> None:
    """Aliases sort as backup, east, west; the first two have no flow between them, and the group picker answered
    the page's first load with an error."""
    _backup, east, west = (
        Cluster.objects.create(alias=a, bootstrap_servers="127.0.0.1:1") for a in ("backup", "east", "west")
    )
    Flow.objects.create(source=west, target=east)
    html = browser("operator").get("/failover/").content.decode()
    assert "<option selected>west</option>" in html.split('id="f-source"')[1].split("</select>")[0]
    assert "<option selected>east</option>" in html.split('id="f-target"')[1].split("</select>")[0]
