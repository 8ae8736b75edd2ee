"""`python -m replication`'s commands: run flows standalone, translate a group's offsets."""
