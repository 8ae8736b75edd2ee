"""Replication facts: what tasks replicated and when heartbeats arrived, for the analytics jobs."""
