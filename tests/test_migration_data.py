"""tests/conftest.py: after a flush (what a transactional test ends with), the data migrations' rows come back."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command

from controlplane.alerts.choices import AlertKind
from controlplane.alerts.models import AlertRule
from tests.conftest import _run_data_migrations


@pytest.mark.django_db(transaction=True)
def test_a_flushed_database_gets_the_role_groups_and_global_alert_rules_again() -> None:
    migrated = (sorted(Group.objects.values_list("name", flat=True)), sorted(_global_rules()))
    # One global default rule per kind of alert.
    assert migrated[0] == ["admin", "operator", "viewer"] and [kind for kind, *_ in migrated[1]] == sorted(AlertKind)
    call_command("flush", interactive=False, verbosity=0)
    assert not Group.objects.exists() and not AlertRule.objects.exists()
    _run_data_migrations()
    assert (sorted(Group.objects.values_list("name", flat=True)), sorted(_global_rules())) == migrated


def _global_rules() -> list[tuple[str, float, int]]:
    return list(AlertRule.objects.filter(flow=None).values_list("kind", "threshold", "for_seconds"))
