from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client

from controlplane.accounts.models import ApiToken
from controlplane.urls import urlpatterns


@pytest.mark.django_db
def test_home_page_sends_anonymous_browsers_to_the_login_page(client: Client) -> None:
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"] == "/login/?next=/"
    login = client.get(response["Location"])
    assert b"<title>Log in \xc2\xb7 Mirrorplane</title>" in login.content


@pytest.mark.django_db
def test_home_page_shows_the_replication_graph_once_logged_in(client: Client, admin_user: User) -> None:
    client.force_login(admin_user)
    html = client.get("/").content.decode()
    assert "Replication graph" in html
    assert 'href="/admin/"' in html
    assert 'href="/api/docs/"' in html
    assert "/static/vendor/plotly.min.js" in html


@pytest.mark.django_db
def test_healthz_reports_ok_once_the_database_answers(client: Client) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/api/v1/", "/api/schema/"])
def test_api_refuses_anonymous_requests(client: Client, path: str) -> None:
    assert client.get(path).status_code in (401, 403)


@pytest.mark.django_db
def test_api_root_accepts_a_token(client: Client, admin_user: User) -> None:
    _, secret = ApiToken.objects.create(user=admin_user)
    response = client.get("/api/v1/", HTTP_AUTHORIZATION=f"Token {secret}")
    assert response.status_code == 200


@pytest.mark.django_db
def test_the_api_root_lists_the_resources_of_every_apps_router(client: Client, admin_user: User) -> None:
    client.force_login(admin_user)
    listed = client.get("/api/v1/", HTTP_ACCEPT="application/json").json()
    # DRF's root lists the resources that can be listed: not jobs, which are read one by one.
    assert sorted(listed) == [
        "alert-rules",
        "alert-silences",
        "alert-webhooks",
        "alerts",
        "audit",
        "clusters",
        "failovers",
        "flows",
        "reports",
        "tokens",
    ]


def test_the_api_is_mounted_once_by_its_composition_root() -> None:
    assert [str(p.pattern) for p in urlpatterns if str(p.pattern).startswith("api/v1/")] == ["api/v1/"]


@pytest.mark.django_db
def test_schema_is_served_to_a_logged_in_user(client: Client, admin_user: User) -> None:
    client.force_login(admin_user)
    response = client.get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    assert response.json()["info"]["title"] == "Mirrorplane API"


@pytest.mark.django_db
def test_api_docs_send_anonymous_browsers_to_the_login_page(client: Client) -> None:
    response = client.get("/api/docs/")
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


@pytest.mark.django_db
def test_api_docs_load_swagger_ui_from_local_static_files(client: Client, admin_user: User) -> None:
    client.force_login(admin_user)
    response = client.get("/api/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/" in html
    assert "cdn" not in html.lower()


@pytest.mark.django_db
def test_admin_index_opens_for_a_superuser(client: Client, admin_user: User) -> None:
    client.force_login(admin_user)
    assert client.get("/admin/").status_code == 200


@pytest.mark.django_db
def test_a_url_nothing_serves_is_a_json_404_under_the_api_and_a_page_elsewhere(client: Client) -> None:
    api = client.get("/api/v1/clusters/0.5/")  # the router's id takes no dot: Django itself answers
    page = client.get("/no-such-page/")

    assert (api.status_code, api["Content-Type"], api.json()) == (404, "application/json", {"detail": "Not found."})
    assert (page.status_code, page["Content-Type"]) == (404, "text/html; charset=utf-8")


@pytest.mark.django_db
def test_a_form_with_too_many_fields_is_a_json_400_naming_the_limit(client: Client, admin_user: User) -> None:
    client.force_login(admin_user)
    fields = {f"field{n}": "x" for n in range(settings.DATA_UPLOAD_MAX_NUMBER_FIELDS + 1)}

    response = client.post("/api/v1/clusters/", fields)  # multipart, as the schema allows

    assert (response.status_code, response["Content-Type"]) == (400, "application/json")
    assert "DATA_UPLOAD_MAX_NUMBER_FIELDS" in response.json()["detail"]
