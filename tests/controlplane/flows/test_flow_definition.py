"""FlowConfig's field metadata (config.PROPERTIES) is the one definition of a flow's properties: the Flow model's
columns, the API's fields, the flow form and the MM2 properties files say what it says, so a property added to
FlowConfig and forgotten in one of them fails here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import models
from rest_framework.test import APIClient

from controlplane.clusters.models import Cluster
from controlplane.flows.api.serializers import FlowSerializer
from controlplane.flows.models import Flow
from controlplane.flows.services import FACTS_FIELDS
from controlplane.ui.forms import flow_sections
from replication.config import PROPERTIES, Property

Api = Callable[[str | None], APIClient]
NOT_PROPERTIES = {"id", "name", "source", "target", "paused", "generation", "created_at", "updated_at"}
COLUMN_OF_KIND = {
    "bool": models.BooleanField,
    "int": models.IntegerField,
    "float": models.FloatField,
    "str": models.CharField,
    "list": models.JSONField,
    "map": models.JSONField,
}


def changed(prop: Property) -> Any:
    """A valid value other than the default, as the API takes it."""
    if prop.kind == "bool":
        return not prop.default
    if prop.kind in ("int", "float"):
        return prop.minimum if prop.minimum != prop.default else prop.default + 1
    if prop.kind == "list":
        return ["orders.*"]
    if prop.kind == "map":
        return {"client.rack": "rack-1"}
    return next((c for c in prop.choices if c != prop.default and "." not in c), "_" if prop.default == "." else "x")


def test_the_flow_models_property_columns_are_flowconfigs_with_its_types_defaults_and_choices() -> None:
    columns = {f.name: f for f in Flow._meta.concrete_fields if f.name not in NOT_PROPERTIES}

    assert set(columns) == {*PROPERTIES, *FACTS_FIELDS}
    for name, prop in PROPERTIES.items():
        column = columns[name]
        default = column.default() if callable(column.default) else column.default
        assert isinstance(column, COLUMN_OF_KIND[prop.kind]), name
        assert (tuple(default) if prop.kind == "list" else default) == prop.default, name
        assert {value for value, _ in column.choices or []} <= set(prop.choices), name


def test_the_api_has_a_field_per_property_with_its_mm2_name_help_and_bounds() -> None:
    fields = FlowSerializer().fields

    assert set(fields) - NOT_PROPERTIES == {*PROPERTIES, *FACTS_FIELDS}
    for name, prop in PROPERTIES.items():
        field = fields[name]
        assert field.help_text == f"{prop.name}: {FACTS_FIELDS.get(name, prop.help)}", name
        bounds = (getattr(field, "min_value", None), getattr(field, "max_value", None))
        assert bounds == (prop.minimum, prop.maximum), name
        assert set(getattr(field, "choices", {})) <= set(prop.choices), name


def test_the_flow_form_has_an_input_per_property_labelled_with_its_mm2_name() -> None:
    inputs = [field for section in flow_sections(["us-west", "us-east"]) for field in section.fields]
    by_name = {field.name: field for field in inputs}

    # The producer and consumer overrides (maps) are set through the API only.
    on_form = {name for name, prop in PROPERTIES.items() if prop.kind != "map"}
    assert len(inputs) == len(by_name)
    assert set(by_name) == {"source", "target", *on_form, *FACTS_FIELDS}
    for name in on_form:
        prop, field = PROPERTIES[name], by_name[name]
        assert (field.label, field.initial) == (prop.name, prop.default), name
        assert field.help.startswith(FACTS_FIELDS.get(name, prop.help)), name


@pytest.mark.django_db
def test_an_export_names_every_property_by_its_mm2_name(api: Api) -> None:
    for alias in ("us-west", "us-east"):
        Cluster.objects.create(alias=alias, bootstrap_servers=f"{alias}:9092")
    data = {name: changed(prop) for name, prop in PROPERTIES.items()}
    created = api("admin").post("/api/v1/flows/", {"source": "us-west", "target": "us-east", **data}, format="json")
    assert created.status_code == 201, created.content

    exported = api("viewer").get("/api/v1/flows/export/").content.decode()

    keys = {line.split(" = ")[0] for line in exported.splitlines() if line.startswith("us-west->us-east.")}
    names = [f"{prop.name}.client.rack" if prop.kind == "map" else prop.name for prop in PROPERTIES.values()]
    assert keys == {f"us-west->us-east.{name}" for name in names}
