"""A flow's side emitters beside its tasks: heartbeats, checkpoints and group offset sync, run periodically."""
