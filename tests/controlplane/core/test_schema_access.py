"""The API schema, the API root and the API docs need a role like the rest of the API; a
signed-in user with no role gets nothing from them."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.live import Http

URLS = ["/api/schema/", "/api/v1/", "/api/docs/"]


@pytest.mark.parametrize("token", [True, False], ids=["token", "session"])
@pytest.mark.django_db(transaction=True)
def test_a_user_with_no_role_gets_nothing_from_the_schema_the_api_root_or_the_docs(
    live_server: Any, token: bool
) -> None:
    nobody = Http(live_server.url, None, token=token)

    answers = {url: nobody.get(url) for url in URLS}

    # The docs page is a browser page: a token is no login there, so it sends the token user to the login page.
    docs = 302 if token else 403
    assert {url: r.status_code for url, r in answers.items()} == {**{url: 403 for url in URLS}, "/api/docs/": docs}
    for response in answers.values():
        assert "openapi" not in response.text.lower()
        assert "/api/v1/clusters" not in response.text


@pytest.mark.django_db(transaction=True)
def test_anonymous_users_get_nothing_either(live_server: Any) -> None:
    anonymous = Http(live_server.url, None)
    anonymous.session.headers.pop("Authorization")

    statuses = {url: anonymous.get(url).status_code for url in URLS}

    assert statuses == {"/api/schema/": 403, "/api/v1/": 403, "/api/docs/": 302}


@pytest.mark.django_db(transaction=True)
def test_a_viewer_reads_the_schema_the_api_root_and_the_docs(live_server: Any) -> None:
    viewer = Http(live_server.url, "viewer", token=False)

    answers = {url: viewer.get(url) for url in URLS}

    assert {url: r.status_code for url, r in answers.items()} == {url: 200 for url in URLS}
    assert "openapi" in answers["/api/schema/"].text
    assert "clusters" in answers["/api/v1/"].json()
