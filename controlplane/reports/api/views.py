from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, status, viewsets
from rest_framework.exceptions import APIException
from rest_framework.permissions import BasePermission
from rest_framework.serializers import BaseSerializer

from controlplane.audit.services import record
from controlplane.core.pagination import OptInLimitOffsetPagination
from controlplane.core.permissions import IsOperator, IsViewer
from controlplane.reports import services
from controlplane.reports.api.serializers import ReportLimitSerializer, ReportSerializer
from controlplane.reports.models import Report
from controlplane.reports.tasks import run_report


class TooManyActiveReports(APIException):
    """HTTP 429 naming the limit that was reached and its value: {"detail", "limit", "value"}."""

    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    default_code = "too_many_active_reports"

    def __init__(self, refused: services.ActiveLimitReached) -> None:
        super().__init__(str(refused))
        # A dict detail is the body as it is
        body: dict[str, Any] = {"detail": str(refused), "limit": refused.limit, "value": refused.value}
        self.detail = body  # DRF would turn the numbers into strings


@extend_schema_view(
    create=extend_schema(
        responses={
            201: ReportSerializer,
            400: OpenApiResponse(description="the field (job, since, until, parameters) and what is wrong with it"),
            429: OpenApiResponse(ReportLimitSerializer, description="too many report runs queued or running"),
        }
    )
)
class ReportViewSet(
    mixins.CreateModelMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet[Report]
):
    """Analytics reports: list and read for viewers; operators request a run (job, window and the job's options),
    at most MIRRORPLANE_REPORT_MAX_ACTIVE_PER_USER of theirs and MIRRORPLANE_REPORT_MAX_ACTIVE in all at once."""

    queryset = Report.objects.all()
    serializer_class = ReportSerializer
    pagination_class = OptInLimitOffsetPagination  # ?limit=N: the newest N runs (the flow page polls these)

    def get_permissions(self) -> list[BasePermission]:
        return [IsOperator()] if self.action == "create" else [IsViewer()]

    def perform_create(self, serializer: BaseSerializer[Report]) -> None:
        try:
            report = serializer.save(requested_by=self.request.user)
        except services.ActiveLimitReached as exc:
            raise TooManyActiveReports(exc) from None
        record(self.request.user, "report.create", report, after=serializer.data)
        run_report.delay_on_commit(report.pk)
