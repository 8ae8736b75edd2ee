"""A replication task: consume, produce, commit positions (at least once or exactly once), resume, report faults."""
