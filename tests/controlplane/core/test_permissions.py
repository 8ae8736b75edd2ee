from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser, Group, User

from controlplane.core.permissions import role_of
from tests.controlplane.api.base import make_user


@pytest.mark.django_db
def test_the_role_groups_exist_after_migrating() -> None:
    assert set(Group.objects.values_list("name", flat=True)) >= {"viewer", "operator", "admin"}


@pytest.mark.django_db
def test_role_of_is_the_strongest_group_and_a_superuser_is_admin() -> None:
    both = make_user("both", "viewer")
    both.groups.add(Group.objects.get(name="operator"))
    assert role_of(both) == "operator"
    assert role_of(make_user("v", "viewer")) == "viewer"
    assert role_of(make_user("nobody", None)) is None
    assert role_of(User.objects.create_superuser("root", password="x")) == "admin"
    assert role_of(AnonymousUser()) is None


@pytest.mark.django_db
def test_an_inactive_user_has_no_role() -> None:
    user = make_user("gone", "admin")
    user.is_active = False
    assert role_of(user) is None
