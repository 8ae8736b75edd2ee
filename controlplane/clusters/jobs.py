"""The connectivity check as a background job (kind ``cluster.check``): what the job stores and how it runs.

A saved cluster's job stores only its id; an unsaved one's stores the form's settings, its SASL password as a
Fernet token (cleared with the rest of the inputs when the job ends). Neither the result nor the error carries a
credential: librdkafka's errors name hosts, and the password is masked in them all the same.
"""

from __future__ import annotations

from typing import Any

from controlplane.audit.services import record
from controlplane.clusters import crypto, services
from controlplane.clusters.models import Cluster
from controlplane.core.permissions import OPERATOR
from controlplane.jobs.models import Job
from controlplane.jobs.services import JobFailed, Kind

CHECK = "cluster.check"
_UNSAVED_FIELDS = ("alias", "bootstrap_servers", "security_protocol", "sasl_mechanism", "sasl_username", "ssl_ca_pem")


def saved_inputs(cluster: Cluster) -> dict[str, Any]:
    return {"cluster": cluster.pk}


def unsaved_inputs(values: dict[str, Any]) -> dict[str, Any]:
    """The validated form values of an unsaved cluster; only the password given in the request is used."""
    values = dict(values)
    password = values.pop("sasl_password", "") or ""
    cluster = Cluster(**values)  # fills the model's defaults (security protocol, ...)
    settings = {name: str(getattr(cluster, name) or "") for name in _UNSAVED_FIELDS}
    return {"unsaved": {**settings, "sasl_password_encrypted": crypto.encrypt(password)}}


def run_check(job: Job) -> dict[str, Any]:
    """Connect to the cluster: brokers and topic count, or ``JobFailed`` with librdkafka's error. Audited."""
    saved = "cluster" in job.inputs
    if saved:
        cluster = Cluster.objects.filter(pk=job.inputs["cluster"]).first()
        if cluster is None:
            raise JobFailed(f"cluster {job.inputs['cluster']} was deleted before the check ran")
    else:
        cluster = Cluster(**{name: job.inputs["unsaved"][name] for name in _UNSAVED_FIELDS})
        cluster.sasl_password_encrypted = job.inputs["unsaved"]["sasl_password_encrypted"]
    result = services.connectivity_check(cluster)
    if "error" in result:
        result["error"] = _masked(result["error"], cluster.sasl_password)
    summary: dict[str, Any] = {key: result[key] for key in ("ok", "topic_count", "error") if key in result}
    record(job.created_by, "cluster.check", cluster if saved else None, after={"alias": cluster.alias, **summary})
    if not result["ok"]:
        raise JobFailed(result["error"])
    return result


def _masked(text: str, secret: str) -> str:
    return text.replace(secret, "********") if secret else text


KIND = Kind(name=CHECK, role=OPERATOR, run=run_check)
