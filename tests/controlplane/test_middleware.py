from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db


def test_a_nul_byte_in_a_query_parameter_is_a_400_naming_it() -> None:
    client = APIClient()
    client.force_authenticate(User.objects.create_superuser("nul-admin", password="x"))
    response = client.get("/api/v1/audit/", {"actor": "ö\x00"})
    assert response.status_code == 400
    assert response.json() == {"actor": ["NUL bytes are not allowed."]}
