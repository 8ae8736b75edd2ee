"""Benchmarks of Mirrorplane's data plane beside Kafka's own MirrorMaker. They print figures; they are not tests."""
