"""The API's refusals in its OpenAPI schema, documented once for every operation.

DRF refuses the same way on every view: 400 with the fields and their reasons (on every write, an unknown field:
``core.serializers.StrictInput``), 401/403 for credentials or a role,
404 for an object that does not exist, 415 for a body of a type the view does not read, 429 when throttled.
``document_errors`` (a drf-spectacular postprocessing hook) adds those answers to each operation that can give
them, with their bodies as the ``Error`` and ``FieldErrors`` components, so a view documents only the answers of
its own (a 409 with its state, a 503). An answer a view documents itself is kept; one it documents without a body
gets the standard body.
"""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory
from rest_framework.throttling import BaseThrottle, ScopedRateThrottle
from rest_framework.views import APIView

Schema = dict[str, Any]

ERROR: Schema = {"$ref": "#/components/schemas/Error"}
FIELD_ERRORS: Schema = {"$ref": "#/components/schemas/FieldErrors"}
COMPONENTS: dict[str, Schema] = {
    "Error": {
        "type": "object",
        "description": "A refusal; `detail` says why.",
        "properties": {"detail": {"type": "string"}},
        "required": ["detail"],
    },
    "FieldErrors": {
        "type": "object",
        "description": "Bad input: each field named with its reasons (a list of messages, or the errors inside a "
        "nested object or list); `non_field_errors` for the input as a whole; `detail` alone when the body or a "
        "query could not be read at all.",
        "additionalProperties": {"anyOf": [{"type": "string"}, {"type": "array"}, {"type": "object"}]},
        "minProperties": 1,
    },
}
WRITES = ("post", "put", "patch")
DESCRIPTIONS = {
    "400": "Bad input: the fields named, with their reasons.",
    "401": "No credentials, or invalid ones.",
    "403": "No credentials or invalid ones, or the user's role does not allow this.",
    "404": "No such object.",
    "415": "The body's Content-Type is none of those documented for it.",
    "429": "Too many requests: `detail` says when to try again (so does the Retry-After header).",
}


def document_errors(result: Schema, generator: Any, request: Request | None, public: bool) -> Schema:
    """The postprocessing hook: each operation's standard refusals, and their bodies as components."""
    views: dict[tuple[str, str], APIView] = {}
    for path, _regex, method, callback in generator.endpoints:
        view = generator.create_view(callback, method)
        views[generator.coerce_path(path, method, view), method.lower()] = view
    result.setdefault("components", {}).setdefault("schemas", {}).update(COMPONENTS)
    for path, operations in result["paths"].items():
        for method, operation in operations.items():
            responses = operation["responses"]
            for status in refusals(method, operation, views.get((path, method)), request):
                responses.setdefault(status, {"description": DESCRIPTIONS[status]})
            for status, response in responses.items():
                if status.startswith("4") and "content" not in response:
                    schema = FIELD_ERRORS if status == "400" else ERROR
                    response["content"] = {"application/json": {"schema": schema}}
    return result


def refusals(method: str, operation: Schema, view: APIView | None, request: Request | None) -> set[str]:
    """The status codes DRF may answer ``operation`` with, besides the view's own answers."""
    found = set()
    where = {parameter["in"] for parameter in operation.get("parameters", [])}
    # A write reads its body even when it takes no field: any field sent is an unknown one (core.serializers).
    body = "requestBody" in operation or method in WRITES
    if body or "query" in where:
        found.add("400")  # a field or a query parameter refused; also a NUL byte anywhere (core.middleware)
    if "path" in where:
        found.add("404")
    if body:
        found.add("415")
    if view is None:
        return found
    # Missing or bad credentials: DRF answers 401 when the first authenticator names a WWW-Authenticate scheme
    # (token), 403 otherwise (session). A role that does not allow the operation: 403. The first authenticator is
    # asked about a request that sent a token (it may challenge only those: accounts.authentication).
    authenticators = view.get_authenticators()
    with_token = Request(APIRequestFactory().get("/", HTTP_AUTHORIZATION="Token schema-probe"))
    challenge = bool(authenticators) and bool(authenticators[0].authenticate_header(with_token))
    if challenge:
        found.add("401")
    if (authenticators and not challenge) or not _open_to_all(view):
        found.add("403")
    if any(_limits(throttle, view) for throttle in view.get_throttles()):
        found.add("429")
    return found


def _open_to_all(view: APIView) -> bool:
    """Whether every permission of the view is AllowAny. A view that picks its permissions by the request's method
    (``demo.api.views``) cannot say without a request, which the generator may not set: it counts as guarded."""
    try:
        permissions = view.get_permissions()
    except AttributeError:  # it read self.request, which the generator did not set
        return False
    return all(isinstance(p, AllowAny) for p in permissions)


def _limits(throttle: BaseThrottle, view: APIView) -> bool:
    """A scoped throttle limits only the views that name a scope."""
    return not isinstance(throttle, ScopedRateThrottle) or getattr(view, throttle.scope_attr, None) is not None
