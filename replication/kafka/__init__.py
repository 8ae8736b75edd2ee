"""Kafka plumbing: client settings, librdkafka logging, internal topics, topic sync, provisioning."""
