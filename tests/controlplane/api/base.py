"""The base API test case: a viewset test class states its URL and sample data, and gets CRUD, role and audit
tests for free (NetBox's APIViewTestCases)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import pytest
from django.contrib.auth.models import Group, User
from django.db import models
from rest_framework.test import APIClient

from controlplane.accounts.models import ApiToken
from controlplane.audit.models import AuditRecord

ROLES = ("viewer", "operator", "admin")


def make_user(username: str, role: str | None) -> User:
    user = User.objects.create_user(username=username, password="unused-" + username)
    if role is not None:
        user.groups.add(Group.objects.get_or_create(name=role)[0])
    return user


def client_for(user: User | None) -> APIClient:
    """A client with a new token of the user (made without an audit record), or an anonymous one."""
    client = APIClient()
    if user is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Token {ApiToken.objects.create(user=user)[1]}")
    return client


@pytest.mark.django_db
class ViewSetContract:
    """Subclass as ``TestXxxAPI``; set ``url``, ``model``, ``audit_name`` and implement the three hooks."""

    url: ClassVar[str]
    model: ClassVar[type[models.Model]]
    audit_name: ClassVar[str]

    def make_object(self) -> models.Model:
        raise NotImplementedError

    def create_data(self) -> dict[str, Any]:
        raise NotImplementedError

    def update_data(self) -> dict[str, Any]:
        raise NotImplementedError

    def detail(self, obj: models.Model) -> str:
        return f"{self.url}{obj.pk}/"

    # --- reads -------------------------------------------------------------------------------------------

    @pytest.mark.parametrize("role", ROLES)
    def test_every_role_can_list_and_retrieve(self, api: Callable[..., APIClient], role: str) -> None:
        obj = self.make_object()
        client = api(role)
        listed = client.get(self.url)
        assert listed.status_code == 200, listed.content
        body = listed.json()
        items = body["results"] if isinstance(body, dict) else body  # a list that pages by default (flows)
        assert obj.pk in [item["id"] for item in items]
        assert client.get(self.detail(obj)).json()["id"] == obj.pk

    @pytest.mark.parametrize("role", [None, "nobody"])
    def test_anonymous_and_roleless_users_are_refused_everything(
        self, api: Callable[..., APIClient], role: str | None
    ) -> None:
        obj = self.make_object()
        client = api(role)
        responses = [
            client.get(self.url),
            client.get(self.detail(obj)),
            client.post(self.url, self.create_data(), format="json"),
            client.patch(self.detail(obj), self.update_data(), format="json"),
            client.delete(self.detail(obj)),
        ]
        # Anonymous: 403 rather than 401: a request that offers no token is sent no challenge.
        assert [r.status_code for r in responses] == [403] * 5
        assert self.model.objects.filter(pk=obj.pk).exists()

    # --- writes ------------------------------------------------------------------------------------------

    @pytest.mark.parametrize("role", ["viewer", "operator"])
    def test_viewers_and_operators_cannot_change_anything(self, api: Callable[..., APIClient], role: str) -> None:
        obj = self.make_object()
        before = self.model.objects.count()
        client = api(role)
        assert client.post(self.url, self.create_data(), format="json").status_code == 403
        assert client.patch(self.detail(obj), self.update_data(), format="json").status_code == 403
        assert client.put(self.detail(obj), self.create_data(), format="json").status_code == 403
        assert client.delete(self.detail(obj)).status_code == 403
        assert self.model.objects.count() == before
        assert not AuditRecord.objects.exists()

    def test_admin_creates_updates_and_deletes_with_an_audit_record_each(self, api: Callable[..., APIClient]) -> None:
        client = api("admin")
        created = client.post(self.url, self.create_data(), format="json")
        assert created.status_code == 201, created.content
        url = f"{self.url}{created.json()['id']}/"
        updated = client.patch(url, self.update_data(), format="json")
        assert updated.status_code == 200, updated.content
        for name, value in self.update_data().items():
            if not name.endswith("password"):
                assert updated.json()[name] == value
        assert client.delete(url).status_code == 204
        assert client.get(url).status_code == 404
        actions = list(AuditRecord.objects.order_by("id").values_list("action", "actor_username"))
        assert actions == [(f"{self.audit_name}.{verb}", "admin-user") for verb in ("create", "update", "delete")]
        update = AuditRecord.objects.get(action=f"{self.audit_name}.update")
        assert update.before is not None and update.after is not None
        assert update.object_id == str(created.json()["id"])
