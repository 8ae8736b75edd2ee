"""MirrorMaker 2's concepts: replication policies, internal records, filters, cycles, properties, MirrorClient."""
