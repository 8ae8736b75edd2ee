"""Offset translation: the offset syncs a task writes, the store that reads them, groups' offsets translated."""
