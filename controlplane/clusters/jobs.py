"""The connectivity check as a background job (kind ``cluster.check``): what the job stores and how it runs.

A saved cluster's job stores only its id; an unsaved one's stores the form's settings, its SASL password and client
key as Fernet tokens (cleared with the rest of the inputs when the job ends). Neither the result nor the error carries a
credential: librdkafka's errors name hosts, and the password is masked in them all the same.
"""

from __future__ import annotations

from typing import Any

from controlplane.audit.services import record
from controlplane.clusters import crypto, services
from controlplane.clusters.models import SECRET_FIELDS, Cluster
from controlplane.core.permissions import OPERATOR
from controlplane.jobs.models import Job
from controlplane.jobs.services import JobFailed, Kind

CHECK = "cluster.check"
_UNSAVED_FIELDS = (
    "alias",
    "bootstrap_servers",
    "security_protocol",
    "sasl_mechanism",
    "sasl_username",
    "ssl_ca_pem",
    "ssl_certificate_pem",
)


def saved_inputs(cluster: Cluster) -> dict[str, Any]:
    return {"cluster": cluster.pk}


def unsaved_inputs(values: dict[str, Any]) -> dict[str, Any]:
    """The validated form values of an unsaved cluster; only the credentials given in the request are used."""
    values = dict(values)
    secrets = {name: values.pop(name, "") or "" for name in SECRET_FIELDS}
    cluster = Cluster(**values)  # fills the model's defaults (security protocol, ...)
    settings = {name: str(getattr(cluster, name) or "") for name in _UNSAVED_FIELDS}
    return {"unsaved": {**settings, **{f"{name}_encrypted": crypto.encrypt(secrets[name]) for name in SECRET_FIELDS}}}


def run_check(job: Job) -> dict[str, Any]:
    """Connect to the cluster: brokers and topic count, or ``JobFailed`` with librdkafka's error. Audited."""
    saved = "cluster" in job.inputs
    if saved:
        cluster = Cluster.objects.filter(pk=job.inputs["cluster"]).first()
        if cluster is None:
            raise JobFailed(f"cluster {job.inputs['cluster']} was deleted before the check ran")
    else:
        cluster = Cluster(**{name: job.inputs["unsaved"][name] for name in _UNSAVED_FIELDS})
        for name in SECRET_FIELDS:
            setattr(cluster, f"{name}_encrypted", job.inputs["unsaved"].get(f"{name}_encrypted", ""))
    result = services.connectivity_check(cluster)
    if "error" in result:
        for secret in (cluster.sasl_password, cluster.ssl_key_pem):
            result["error"] = _masked(result["error"], secret)
    summary: dict[str, Any] = {key: result[key] for key in ("ok", "topic_count", "error") if key in result}
    record(job.created_by, "cluster.check", cluster if saved else None, after={"alias": cluster.alias, **summary})
    if not result["ok"]:
        raise JobFailed(result["error"])
    return result


def _masked(text: str, secret: str) -> str:
    return text.replace(secret, "********") if secret else text


KIND = Kind(name=CHECK, role=OPERATOR, run=run_check)
