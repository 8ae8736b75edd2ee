from __future__ import annotations

from django.db import transaction
from rest_framework import mixins, viewsets

from controlplane.core.pagination import OptInLimitOffsetPagination
from controlplane.core.permissions import IsOperator, IsViewer
from controlplane.reports.api.serializers import ReportSerializer
from controlplane.reports.models import Report


class ReportViewSet(mixins.CreateModelMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Analytics reports: list and read for viewers; operators request a run (job and window)."""

    queryset = Report.objects.all()
    serializer_class = ReportSerializer
    pagination_class = OptInLimitOffsetPagination  # ?limit=N: the newest N runs (the flow page polls these)

    def get_permissions(self):  # type: ignore[no-untyped-def]
        return [IsOperator()] if self.action == "create" else [IsViewer()]

    def perform_create(self, serializer: ReportSerializer) -> None:
        from controlplane.audit.services import record
        from controlplane.reports.tasks import run_report

        report = serializer.save(requested_by=self.request.user)
        record(self.request.user, "report.create", report, after=serializer.data)
        transaction.on_commit(lambda: run_report.delay(report.pk))
