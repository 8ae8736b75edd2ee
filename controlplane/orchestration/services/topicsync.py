"""Topic config and ACL sync of a flow: remote topics take their source topic's configs and ACLs (MM2 rules)."""

from __future__ import annotations

from controlplane.flows.models import Flow
from controlplane.flows.services import flow_config
from replication.kafka.clients import ClientFactory
from replication.kafka.topicsync import TopicSync


def sync_topic_configs_and_acls(flow: Flow) -> dict[str, int]:
    """One sync pass; returns how many remote topics changed config and how many ACL bindings were copied."""
    config = flow_config(flow)
    clients = ClientFactory()
    sync = TopicSync(config, clients.admin(config.source), clients.admin(config.target))
    topics = sync.source_topics()
    sync.ensure_remote_topics(topics)
    changed = sync.sync_configs(list(topics)) if config.sync_topic_configs_enabled else []
    acls = sync.sync_acls(list(topics)) if config.sync_topic_acls_enabled else []
    return {"topics": len(topics), "configs_changed": len(changed), "acls_copied": len(acls)}
