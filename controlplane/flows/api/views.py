"""Flow CRUD, operations (pause, resume, restart), checkpoints, translation, and MM2 properties import/export."""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet, TextField
from django.db.models.functions import Cast
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.exceptions import ParseError, Throttled, ValidationError
from rest_framework.parsers import JSONParser
from rest_framework.request import Request
from rest_framework.response import Response

from controlplane.audit.api.viewsets import AuditedModelViewSet, Conflict
from controlplane.audit.services import snapshot
from controlplane.core.pagination import LimitOffsetPagination100
from controlplane.core.serializers import NoInput
from controlplane.flows import mm2, mm2import, offsets, services, takeover
from controlplane.flows.api.parsers import PlainTextParser
from controlplane.flows.api.serializers import (
    CheckpointSerializer,
    CheckpointsQuerySerializer,
    ExportQuerySerializer,
    FlowSerializer,
    GroupQuerySerializer,
    ImportQuerySerializer,
    ImportResultSerializer,
    PropertiesSerializer,
    TranslationSerializer,
)
from controlplane.flows.models import Flow

SEARCH = OpenApiParameter(
    "search", OpenApiTypes.STR, description="only flows whose source or target alias or a topic filter contains it"
)


class FlowViewSet(AuditedModelViewSet[Flow]):
    queryset = Flow.objects.select_related("source", "target").order_by("pk")
    serializer_class = FlowSerializer
    pagination_class = LimitOffsetPagination100
    audit_name = "flow"
    operator_actions = ("pause", "resume", "restart")

    def get_queryset(self) -> QuerySet[Flow]:
        """The list filtered by ``search``: a part of the source's or target's alias or of a topic filter."""
        flows = super().get_queryset()
        search = self.request.query_params.get("search", "").strip() if self.action == "list" else ""
        if not search:
            return flows
        topics = Cast("topics", output_field=TextField())
        matches = (
            Q(source__alias__icontains=search) | Q(target__alias__icontains=search) | Q(topics_text__icontains=search)
        )
        return flows.annotate(topics_text=topics).filter(matches)

    @extend_schema(parameters=[SEARCH])
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Flows by id, 100 per page (`limit` up to 1000, `offset`), optionally only those matching `search`."""
        return super().list(request, *args, **kwargs)

    @extend_schema(request=None, responses=FlowSerializer)
    @action(detail=True, methods=["post"])
    def pause(self, request: Request, pk: str | None = None) -> Response:
        """Stop replicating until resumed; positions are kept."""
        return self._operate("pause", services.pause)

    @extend_schema(request=None, responses=FlowSerializer)
    @action(detail=True, methods=["post"])
    def resume(self, request: Request, pk: str | None = None) -> Response:
        return self._operate("resume", services.resume)

    @extend_schema(request=None, responses=FlowSerializer)
    @action(detail=True, methods=["post"])
    def restart(self, request: Request, pk: str | None = None) -> Response:
        """Stop the flow's tasks and start them again (a new generation)."""
        return self._operate("restart", services.restart)

    @extend_schema(parameters=[CheckpointsQuerySerializer], responses=CheckpointSerializer(many=True))
    @action(detail=True, methods=["get"], pagination_class=None)
    def checkpoints(self, request: Request, pk: str | None = None) -> Response:
        """The latest checkpoints in the target cluster, per consumer group, remote topic and partition."""
        query = self.query(CheckpointsQuerySerializer)
        return Response(offsets.checkpoints(self.get_object(), query.get("group") or None))

    @extend_schema(parameters=[GroupQuerySerializer], responses=TranslationSerializer(many=True))
    @action(detail=True, methods=["get"], pagination_class=None, url_path="translated-offsets")
    def translated_offsets(self, request: Request, pk: str | None = None) -> Response:
        """A source consumer group's committed offsets translated to the target: where to resume after failover."""
        query = self.query(GroupQuerySerializer)
        return Response(offsets.translated_offsets(self.get_object(), query["group"]))

    @extend_schema(parameters=[ExportQuerySerializer], responses={(200, "text/plain"): OpenApiTypes.STR})
    @action(detail=False, methods=["get"])
    def export(self, request: Request) -> HttpResponse:
        """Every flow, or the flows named by ``flows``, as a MirrorMaker 2 properties file (passwords written as
        ********); a file of chosen flows names only their clusters."""
        chosen = self.query(ExportQuerySerializer).get("flows")
        flows = self.get_queryset() if chosen is None else self.get_queryset().filter(pk__in=chosen)
        text = mm2.export_properties(flows)
        self.audit("export", None, after={"flows": len(chosen) if chosen is not None else flows.count()})
        response = HttpResponse(text, content_type="text/plain; charset=utf-8")
        if chosen is not None and len(chosen) == 1:
            response["Content-Disposition"] = f'attachment; filename="mirrorplane-flow-{chosen[0]}.properties"'
        return response

    @extend_schema(
        request={"application/json": PropertiesSerializer, "text/plain": OpenApiTypes.STR},
        parameters=[ImportQuerySerializer],
        responses={
            200: OpenApiResponse(ImportResultSerializer, "a dry run: what the import would do; nothing written"),
            201: ImportResultSerializer,
            400: OpenApiResponse(description="properties: every problem of the file, each with its line"),
            409: OpenApiResponse(description="detail: the import would differ from the preview named by `expect`"),
            429: OpenApiResponse(description="detail: too many failed imports, and when to retry"),
        },
    )
    @action(detail=False, methods=["post"], url_path="import", parser_classes=[JSONParser, PlainTextParser])
    def import_(self, request: Request) -> Response:
        """Create or change the clusters and flows of a MirrorMaker 2 properties file, all or nothing; with
        `dry_run`, only say what would be created, changed (old -> new) or left unchanged. A refused import is
        audited, and a user's refused imports are limited (a 429 names the limit)."""
        wait = mm2import.seconds_until_import_allowed(request.user)
        if wait:
            raise Throttled(wait, detail=f"Too many failed imports: {mm2import.FAILED_IMPORTS_LIMIT} per user.")
        query = self.query(ImportQuerySerializer)
        try:
            data = {"properties": request.data} if isinstance(request.data, str) else request.data
            serializer = PropertiesSerializer(data=data)
            serializer.is_valid(raise_exception=True)
            text = serializer.validated_data["properties"]
            result = mm2import.import_properties(
                text, request.user, dry_run=query["dry_run"], expect=query.get("expect"), takeover=query["takeover"]
            )
        except (ParseError, ValidationError) as exc:
            mm2import.record_failure(request.user, exc.detail)
            raise
        except mm2import.PreviewOutdated as exc:
            raise Conflict(str(exc)) from None
        if not result.dry_run:
            self.audit("import", None, after=result.audited())
            if query["takeover"]:
                result.takeover_job = takeover.enqueue(result.flows, request.user)
        answer = status.HTTP_200_OK if result.dry_run else status.HTTP_201_CREATED
        return Response(ImportResultSerializer(result).data, status=answer)

    def _operate(self, name: str, operation: Any) -> Response:
        NoInput(data=self.request.data).is_valid(raise_exception=True)
        flow = self.get_object()
        before = snapshot(flow)
        operation(flow)
        self.audit(name, flow, before=before, after=snapshot(flow))
        return Response(self.get_serializer(flow).data)
