"""Views outside the REST API and the UI: the health check, and the answers Django gives before any view: a URL
nothing serves, a request it refuses to read. Under /api/ those are JSON like the API's own refusals (its clients
read JSON, and its OpenAPI schema documents no other body); elsewhere Django's pages."""

from __future__ import annotations

import logging

from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.db import DatabaseError, connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

logger = logging.getLogger(__name__)


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """Answers ok only when the database answers a query."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError:
        logger.exception("health check: database query failed")
        return JsonResponse({"status": "unavailable", "reason": "database"}, status=503)
    return JsonResponse({"status": "ok"})


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """``handler404``: a URL nothing serves."""
    if _in_api(request):
        return JsonResponse({"detail": "Not found."}, status=404)
    return defaults.page_not_found(request, exception)


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """``handler400``: a request Django refuses to read (too many form fields or files, a body too large)."""
    if _in_api(request):
        # These name the limit; other refusals (a bad Host header, ...) are only logged, as Django's page does.
        said = isinstance(exception, RequestDataTooBig | TooManyFieldsSent | TooManyFilesSent)
        return JsonResponse({"detail": str(exception) if said else "The request was refused."}, status=400)
    return defaults.bad_request(request, exception)


def _in_api(request: HttpRequest) -> bool:
    return request.path_info.startswith("/api/")
