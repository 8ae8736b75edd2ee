"""Beat jobs of the UI: the flow time series and the cluster observations (thin wrappers over services)."""

from __future__ import annotations

from celery import shared_task

from controlplane.monitoring.services import brokerhealth, partition_lag, sampling
from controlplane.monitoring.services import observe as observations


@shared_task(ignore_result=True, expires=30)
def sample_flows() -> int:
    sampled = sampling.sample_flows()
    partition_lag.sample_partition_lag()
    return sampled


@shared_task(ignore_result=True, expires=60)
def observe() -> int:
    observed = observations.observe_all()
    brokerhealth.observe_all()
    return observed
