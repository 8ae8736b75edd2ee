"""Request bodies are bounded in size and JSON nesting, and going past a bound is a 400
before any parser recurses (deep JSON used to be a 500 RecursionError on every JSON endpoint)."""

from __future__ import annotations

import importlib
import json
import pkgutil
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urlencode

import pytest
from django.conf import settings
from rest_framework import serializers
from rest_framework.test import APIClient

import controlplane
from controlplane.core.fields import BoundedJSONField
from controlplane.core.jsondepth import MAX_JSON_DEPTH, json_depth
from controlplane.reports.models import Report
from tests.support.live import Http

JSON_ENDPOINTS = [
    ("POST", "/api/v1/clusters/"),
    ("POST", "/api/v1/clusters/check/"),
    ("POST", "/api/v1/flows/"),
    ("POST", "/api/v1/flows/import/"),
    ("POST", "/api/v1/flow-preview/"),
    ("POST", "/api/v1/failovers/"),
    ("POST", "/api/v1/reports/"),
    ("POST", "/api/v1/demo/traffic/"),
]


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.django_db(transaction=True)
def test_deeply_nested_json_is_a_400_on_every_json_endpoint(live_server: Any) -> None:
    admin = Http(live_server.url, "admin")
    headers = {"Content-Type": "application/json"}

    answers = {url: admin.request(method, url, data=nested(1000), headers=headers) for method, url in JSON_ENDPOINTS}

    assert {url: r.status_code for url, r in answers.items()} == {url: 400 for _, url in JSON_ENDPOINTS}
    assert all("nested deeper than" in r.json()["detail"] for r in answers.values())


@pytest.mark.django_db(transaction=True)
def test_a_body_over_the_size_bound_is_a_400_whatever_its_type(live_server: Any) -> None:
    admin = Http(live_server.url, "admin")
    body = b"x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)

    for content_type in ("application/json", "text/plain", "application/x-www-form-urlencoded"):
        response = admin.post("/api/v1/flows/import/", data=body, headers={"Content-Type": content_type})
        assert response.status_code == 400, content_type
        assert "larger than" in response.json()["detail"]


@pytest.mark.django_db(transaction=True)
def test_fuzzed_body_sizes_and_depths_never_give_a_5xx(live_server: Any) -> None:
    admin = Http(live_server.url, "admin")
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    depths = [0, 1, 2, MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1, 500, 5000, 100_000]
    bodies = [nested(d) for d in depths] + ['{"a":' * d + "1" + "}" * d for d in depths]
    bodies += ['"' + "[" * 10_000, "[" * 10_000, '{"alias": "' + "x" * (limit - 20) + '"}', "0" * (limit + 1)]

    statuses = {
        (method, url, len(body), json_depth(body)): admin.request(
            method, url, data=body.encode(), headers={"Content-Type": "application/json"}
        ).status_code
        for method, url in JSON_ENDPOINTS[:4]
        for body in bodies
    }

    assert [key for key, status in statuses.items() if status >= 500] == []
    assert all(status == 400 for (_, _, _, depth), status in statuses.items() if depth > MAX_JSON_DEPTH)


@pytest.mark.django_db(transaction=True)
def test_json_as_deep_as_the_bound_still_reaches_the_serializer(live_server: Any) -> None:
    admin = Http(live_server.url, "admin")
    body = {"alias": "deep", "bootstrap_servers": "kafka:9092", "sasl_username": _nest("x", MAX_JSON_DEPTH - 1)}

    response = admin.post("/api/v1/clusters/", data=json.dumps(body), headers={"Content-Type": "application/json"})

    assert response.status_code == 400
    assert "sasl_username" in response.json()


def _nest(value: Any, depth: int) -> Any:
    for _ in range(depth):
        value = [value]
    return value


def test_brackets_inside_strings_do_not_count() -> None:
    assert json_depth('{"a": "[[[[{{{{", "b": ["\\"[["]}') == 2
    assert json_depth('"unterminated [[[[') == 0


@pytest.mark.django_db
@pytest.mark.parametrize("format", ["multipart", "form"])
def test_a_deep_json_value_in_a_form_field_is_a_400_naming_the_field(api: Any, format: str) -> None:
    response = _post_form(api("admin"), "/api/v1/reports/", {"parameters": nested(1000)}, format)

    assert response.status_code == 400
    assert response.json()["parameters"] == [f"The JSON value is nested deeper than {MAX_JSON_DEPTH} levels."]
    assert not Report.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("format", ["multipart", "form"])
def test_a_json_value_in_a_form_field_as_deep_as_the_bound_still_reaches_the_serializer(api: Any, format: str) -> None:
    response = _post_form(api("admin"), "/api/v1/reports/", {"parameters": nested(MAX_JSON_DEPTH)}, format)

    assert response.status_code == 400
    assert response.json()["parameters"] == ["an object of at most 20 job options"]


def test_every_writable_json_field_of_the_api_parses_with_the_depth_bound() -> None:
    for module in pkgutil.walk_packages(controlplane.__path__, "controlplane."):
        if ".api." in module.name:
            importlib.import_module(module.name)

    unbounded = [
        f"{serializer.__module__}.{serializer.__name__}: {path}"
        for serializer in _subclasses(serializers.Serializer)
        if serializer.__module__.startswith("controlplane.")
        for path, field in _fields(serializer().fields)
        if getattr(field, "_is_jsonfield", False) and not field.read_only and not isinstance(field, BoundedJSONField)
    ]

    assert unbounded == []


def _post_form(client: APIClient, url: str, data: dict[str, str], format: str) -> Any:
    if format == "multipart":
        return client.post(url, data, format="multipart")
    return client.post(url, urlencode(data), content_type="application/x-www-form-urlencoded")


def _subclasses(cls: type) -> set[type]:
    found = set(cls.__subclasses__())
    return found.union(*(_subclasses(sub) for sub in found))


def _fields(fields: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for name, field in fields.items():
        path = f"{prefix}{name}"
        yield path, field
        child = getattr(field, "child", None)
        if child is not None:
            yield from _fields({"[]": child}, path)
        if isinstance(field, serializers.Serializer):
            yield from _fields(field.fields, path + ".")
