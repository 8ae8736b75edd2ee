"""Real local Kafka clusters for tests, demos and benchmarks: per alias one KRaft broker, several (`3brokers`), or
a ZooKeeper and a broker on 2.3.0.

`python -m localkafka up --clusters us-west,us-east,backup` starts them; `status` and `down` follow.
"""

from __future__ import annotations

from localkafka.cluster import ClusterSpec, LocalCluster
from localkafka.dist import LocalKafkaError
from localkafka.manager import DEFAULT_ALIASES, ClusterStatus, LocalKafka

__all__ = ["DEFAULT_ALIASES", "ClusterSpec", "ClusterStatus", "LocalCluster", "LocalKafka", "LocalKafkaError"]
