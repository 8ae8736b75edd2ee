"""The base of every model viewset: role permissions, and an audit record for each change."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from django.db import models, transaction
from django.db.models import ProtectedError
from rest_framework import status, viewsets
from rest_framework.exceptions import APIException
from rest_framework.serializers import BaseSerializer, Serializer

from controlplane.audit.services import record, snapshot
from controlplane.core.permissions import HasRole

M = TypeVar("M", bound=models.Model)


class Conflict(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The object is in use."
    default_code = "conflict"


class AuditedModelViewSet(viewsets.ModelViewSet[M], Generic[M]):
    """CRUD where create/update/delete and the audit record commit together; ``audit_name`` prefixes actions, and
    the fields named in ``audit_omits`` stay out of the records (every viewer reads the audit log)."""

    permission_classes = [HasRole]
    audit_name = ""
    audit_omits: tuple[str, ...] = ()

    def perform_create(self, serializer: BaseSerializer[M]) -> None:
        with transaction.atomic():
            obj = serializer.save()
            record(self.request.user, f"{self.audit_name}.create", obj, after=self.snapshot(obj))

    def perform_update(self, serializer: BaseSerializer[M]) -> None:
        with transaction.atomic():
            before = self.snapshot(serializer.instance) if serializer.instance is not None else None
            obj = serializer.save()
            record(self.request.user, f"{self.audit_name}.update", obj, before=before, after=self.snapshot(obj))

    def perform_destroy(self, instance: M) -> None:
        before, pk = self.snapshot(instance), instance.pk
        try:
            with transaction.atomic():
                # Lock the row first. Django deletes the cascade table by table, then the row; a worker or the
                # sampler inserting a row that references it in between made the last DELETE fail (a 500 on
                # Postgres, found by the live schemathesis test). Their inserts now wait for this commit.
                # SQLite's IMMEDIATE transactions already hold the write lock.
                type(instance)._default_manager.select_for_update().filter(pk=pk).exists()
                instance.delete()
                instance.pk = pk  # so the record names the deleted object's id
                record(self.request.user, f"{self.audit_name}.delete", instance, before=before)
        except ProtectedError as exc:
            users = ", ".join(sorted(str(obj) for obj in exc.protected_objects))
            raise Conflict(f"{instance} is used by {users}; delete those first") from None

    def snapshot(self, obj: M) -> dict[str, Any]:
        return {k: v for k, v in snapshot(obj).items() if k not in self.audit_omits}

    def query(self, serializer_class: type[Serializer[Any]]) -> dict[str, Any]:
        """The request's query parameters, validated by serializer_class (a 400 names the parameter)."""
        serializer = serializer_class(data=self.request.query_params)
        serializer.is_valid(raise_exception=True)
        return dict(serializer.validated_data)

    def audit(self, action: str, obj: M | None, **values: Any) -> None:
        """Record an operation that is not a plain change (pause, check, import, ...)."""
        record(self.request.user, f"{self.audit_name}.{action}", obj, **values)
