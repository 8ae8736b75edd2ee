"""A cluster named by its alias in a request: a clean 400 for input the database would refuse."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from controlplane.clusters.models import Cluster


class ClusterAliasField(serializers.SlugRelatedField[Cluster]):
    """SlugRelatedField on `alias`. A NUL byte is refused as invalid before the lookup (Postgres refuses NUL in
    text, which would otherwise surface as a 500); other strings are looked up as usual."""

    default_error_messages = {
        **serializers.SlugRelatedField.default_error_messages,
        "nul": "NUL bytes are not allowed.",
    }

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(slug_field="alias", queryset=Cluster.objects.all(), **kwargs)

    def to_internal_value(self, data: Any) -> Cluster:
        if isinstance(data, str) and "\x00" in data:
            self.fail("nul")
        return super().to_internal_value(data)
