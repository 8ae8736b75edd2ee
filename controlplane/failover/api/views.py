"""/api/v1/failovers/: create (the plan), read, and one action per step. Operators and admins run them.

A step's POST only validates and claims the step (a conditional UPDATE), enqueues its job and answers 202 with the
failover, whose ``job`` the client polls with GET. A step already claimed, or not the failover's current one,
answers 409 with the job's state.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db.models import CharField, Q, QuerySet, TextField, Value
from django.db.models.functions import Cast, Concat
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer

from controlplane.audit.services import record
from controlplane.clusters.browse import PageQuery
from controlplane.core.pagination import OptInLimitOffsetPagination
from controlplane.core.permissions import HasRole
from controlplane.failover import steps
from controlplane.failover.api import serializers as s
from controlplane.failover.api.inputs import AbortSerializer
from controlplane.failover.choices import Status, Step
from controlplane.failover.models import Failover
from controlplane.failover.results import PlanResult, StepEntry
from controlplane.failover.services import machine, picker
from controlplane.failover.tasks import run_step

PLAN_FIELDS = ("mode", "source", "target", "groups", "dry_run", "drain_threshold")
SEARCH = OpenApiParameter(
    "search",
    OpenApiTypes.STR,
    description="only failovers whose source or target alias, flow name (`source->target`) or a consumer group "
    "contains it (any case)",
)
STATE = OpenApiParameter(
    "state", OpenApiTypes.STR, enum=Status.values, description="only failovers in this state (400 for another)"
)
CONFLICT = OpenApiResponse(
    s.BusySerializer, "a job of this failover is queued or running, or the failover is not at this step"
)
UNQUEUED = OpenApiResponse(
    s.FailoverSerializer, "the job could not be queued (the broker is down): `job.error` says why"
)


class StepSchema(AutoSchema):
    """Documents a step's route (``start_step`` for one row of the step table) with the step's request body and
    description; every other operation as drf-spectacular does."""

    def _wizard_step(self) -> steps.WizardStep | None:
        name: str = getattr(self.view, "wizard_step", "")
        return steps.BY_NAME[name] if name else None

    def get_description(self) -> str:  # type: ignore[override]  # drf-spectacular's takes no path and method
        step = self._wizard_step()
        return step.doc if step is not None else str(super().get_description())

    def get_request_serializer(self) -> Any:
        step = self._wizard_step()
        return step.inputs if step is not None else super().get_request_serializer()


class FailoverViewSet(
    mixins.CreateModelMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet[Failover]
):
    """A failover is created by its plan (step 1), then walked step by step; every step is audited."""

    queryset = Failover.objects.select_related("source", "target", "created_by", "job_by")
    serializer_class = s.FailoverSerializer
    permission_classes = [HasRole]
    pagination_class = OptInLimitOffsetPagination
    schema = StepSchema()
    operator_actions = ("create", "start_step", "abort", "drain_threshold", "groups")
    # The step a POST <id>/<step>/ runs: each step's route sets it on the view (``get_extra_actions``).
    wizard_step = ""

    @classmethod
    def get_extra_actions(cls) -> list[Any]:
        """The actions below, and one route per job of the step table to ``start_step``."""
        return [*super().get_extra_actions(), *(_step_route(step) for step in steps.JOBS)]

    def get_queryset(self) -> QuerySet[Failover]:
        """The list filtered by ``state`` and ``search`` (aliases, the flow name, consumer groups)."""
        failovers = super().get_queryset()
        if self.action != "list":
            return failovers
        state = self.request.query_params.get("state")
        if state is not None:
            if state not in Status.values:
                raise ValidationError({"state": [f"expected one of {', '.join(Status.values)}"]})
            failovers = failovers.filter(status=state)
        search = self.request.query_params.get("search", "").strip()
        if not search:
            return failovers
        flow_name = Concat("source__alias", Value("->"), "target__alias", output_field=CharField())
        matches = (
            Q(source__alias__icontains=search)
            | Q(target__alias__icontains=search)
            | Q(flow_name__icontains=search)
            | Q(groups_text__icontains=search)
        )
        groups = Cast("groups", output_field=TextField())
        return failovers.annotate(flow_name=flow_name, groups_text=groups).filter(matches)

    @extend_schema(parameters=[SEARCH, STATE])
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Failovers, newest first: the whole list, or a page with `limit` (up to 1000) and `offset`."""
        return super().list(request, *args, **kwargs)

    def perform_create(self, serializer: BaseSerializer[Failover]) -> None:
        failover = serializer.save(created_by=self.request.user, step=Step.PREFLIGHT)
        planned = s.FailoverSerializer(failover).data
        record(self.request.user, "failover.plan", failover, after=planned)
        # The plan as validated, not the raw request: unknown fields are not kept (and a NUL in one would make
        # Postgres refuse the JSON, a 500).
        inputs = {name: planned[name] for name in PLAN_FIELDS}
        by, at = self.request.user.get_username(), failover.created_at.isoformat()
        entry = StepEntry(PlanResult(created=failover.pk), inputs, by, at, complete=True, attempts=1)
        failover.steps = {Step.PLAN: entry.as_json()}
        failover.save(update_fields=["steps"])

    @extend_schema(request=AbortSerializer, responses={200: s.FailoverSerializer, 409: CONFLICT})
    @action(detail=True, methods=["post"])
    def abort(self, request: Request, pk: str | None = None) -> Response:
        """Stop the failover where it is; nothing is undone. Refused (409) while a step's job is queued or running."""
        inputs = AbortSerializer(data=request.data)
        inputs.is_valid(raise_exception=True)
        try:
            failover = machine.abort(self.get_object().pk, inputs.validated_data["reason"], request.user)
        except (machine.Busy, machine.WrongStep) as exc:
            return _conflict(exc)
        return Response(s.FailoverSerializer(failover).data)

    @extend_schema(request=s.DrainThresholdSerializer, responses={200: s.FailoverSerializer, 409: CONFLICT})
    @action(detail=True, methods=["post"], url_path="drain-threshold", url_name="drain-threshold")
    def drain_threshold(self, request: Request, pk: str | None = None) -> Response:
        """Change the drain threshold before the drain completes, without starting over; the next poll uses it."""
        inputs = s.DrainThresholdSerializer(data=request.data)
        inputs.is_valid(raise_exception=True)
        try:
            failover = machine.set_drain_threshold(
                self.get_object().pk, inputs.validated_data["drain_threshold"], request.user
            )
        except machine.WrongStep as exc:
            return _conflict(exc)
        return Response(s.FailoverSerializer(failover).data)

    @extend_schema(
        operation_id="failovers_groups_list",
        parameters=[s.GroupPickerQuerySerializer],
        responses=s.GroupPickerPageSerializer,
    )
    @action(detail=False, methods=["get"])
    def groups(self, request: Request) -> Response:
        """The plan's group picker: a page of the source cluster's consumer groups with committed offsets in topics
        the flow source->target replicates, with state, lag and checkpoint freshness. Reads Kafka with bounded
        timeouts (controlplane.failover.services.picker); an unreachable source is a 400 naming it and its error."""
        query = s.GroupPickerQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        found = query.validated_data
        page = PageQuery(found["search"], found["limit"], found["offset"])
        return Response(s.GroupPickerPageSerializer(picker.consuming_groups(found["flow"], page)).data)

    @extend_schema(responses={202: s.FailoverSerializer, 409: CONFLICT, 503: UNQUEUED})
    def start_step(self, request: Request, pk: str | None = None) -> Response:
        """Queue the job of the step this route is for (``wizard_step``): 202 with the failover."""
        inputs = steps.BY_NAME[self.wizard_step].inputs(data=request.data)
        inputs.is_valid(raise_exception=True)
        failover_id = self.get_object().pk
        try:
            token = machine.claim(failover_id, self.wizard_step, dict(inputs.validated_data), request.user)
        except (machine.Busy, machine.WrongStep) as exc:
            return _conflict(exc)
        try:
            run_step.delay_on_commit(failover_id, token)  # type: ignore[attr-defined]  # Celery 5.4+; not in celery-types
        except Exception as exc:  # the broker is down: free the claim at once rather than when it expires
            machine.fail(failover_id, token, f"the job could not be queued: {type(exc).__name__}: {exc}")
            failover = self.get_queryset().get(pk=failover_id)
            return Response(s.FailoverSerializer(failover).data, status=status.HTTP_503_SERVICE_UNAVAILABLE)
        # Read back: with an eager Celery (tests) the job has already run and its result is shown.
        return Response(
            s.FailoverSerializer(self.get_queryset().get(pk=failover_id)).data, status=status.HTTP_202_ACCEPTED
        )


def _conflict(exc: machine.Busy | machine.WrongStep) -> Response:
    body = {"detail": str(exc), "job": s.StepJobSerializer(exc.failover).data}
    return Response(body, status=status.HTTP_409_CONFLICT)


def _step_route(step: steps.WizardStep) -> Callable[..., Response]:
    """The route POST <id>/<step>/ of one step. DRF sends a route's request to the view method its function is
    named after (``start_step``) and sets its extra kwargs on the view: ``wizard_step`` says which step it is."""

    def start_step(view: FailoverViewSet, request: Request, pk: str | None = None) -> Response:
        return view.start_step(request, pk)

    start_step.__doc__ = step.doc
    route = action(
        detail=True, methods=["post"], url_path=step.name, url_name=step.name, name=step.label, wizard_step=step.name
    )
    return route(start_step)
