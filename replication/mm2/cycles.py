"""Loops in the flow graph that the replication policies cannot detect.

MM2 stops a loop by reading a topic's provenance from its name (``is_cycle``): with the default policy,
``us-west.orders`` is never sent back to us-west. A loop is safe only if, wherever a topic starts on it, some
flow on the way refuses it before it gets home. The identity policy keeps names, and mixed separators hide the
prefix, so such loops replicate records around forever. This module walks each loop with a probe topic and
asks ``replication.mm2.policy.is_cycle`` at every hop, so the rule is the data plane's own.

Pure functions over plain values; no Django.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from replication.mm2.policy import (
    POLICIES,
    DefaultReplicationPolicy,
    IdentityReplicationPolicy,
    ReplicationPolicy,
    is_cycle,
)

PROBE_TOPIC = "mirrorplane-probe"
MAX_PATHS = 10_000  # flow graphs are small; this bounds the work on a pathological one


@dataclass(frozen=True)
class Edge:
    """One flow: source alias -> target alias, named by its policy class and separator."""

    source: str
    target: str
    policy_class: str = "DefaultReplicationPolicy"
    separator: str = "."

    def policy(self) -> ReplicationPolicy:
        if POLICIES.get(self.policy_class) == "identity":
            return IdentityReplicationPolicy(self.source, self.separator)
        return DefaultReplicationPolicy(self.separator)


def undetected_loop(edges: Iterable[Edge], new: Edge) -> list[str] | None:
    """The aliases of a loop that ``new`` closes and no policy on it detects (first alias repeated at the end),
    or None when every loop through ``new`` is caught by ``is_cycle``."""
    return FlowGraph(edge for edge in edges if (edge.source, edge.target) != (new.source, new.target)).loop_of(new)


class FlowGraph:
    """The flows as adjacency lists, built once, so that checking many new flows (an import) stays linear in
    the size of the graph rather than rebuilding it for each. Each alias's flows are kept in target order, so
    paths come out in the same order whatever order the flows were added in."""

    def __init__(self, edges: Iterable[Edge] = ()) -> None:
        self._out: dict[str, list[Edge]] = {}
        for edge in edges:
            self.add(edge)

    def add(self, edge: Edge) -> None:
        insort(self._out.setdefault(edge.source, []), edge, key=lambda e: e.target)

    def loop_of(self, new: Edge) -> list[str] | None:
        """As ``undetected_loop``, for ``new`` against the edges added so far (new itself not among them)."""
        for path in self.paths(new.target, new.source):
            loop = [new, *path]
            if not _detected(loop):
                return [edge.source for edge in loop] + [new.source]
        return None

    def paths(self, start: str, goal: str, limit: int = MAX_PATHS) -> Iterator[list[Edge]]:
        """The simple paths start -> goal (two different aliases), at most ``limit`` of them, depth first: a path
        is yielded when its last alias is reached, before the paths that continue through its siblings."""
        stack: list[tuple[list[Edge], frozenset[str]]] = [([], frozenset({start}))]
        found = 0
        while stack:
            path, seen = stack.pop()
            for edge in self._out.get(path[-1].target if path else start, ()):
                if edge.target == goal:
                    yield [*path, edge]
                    found += 1
                    if found == limit:
                        return
                elif edge.target not in seen:
                    stack.append(([*path, edge], seen | {edge.target}))


def _detected(loop: Sequence[Edge]) -> bool:
    """True if a topic produced on any cluster of the loop is refused before it returns there."""
    return all(_refused_on_the_way([*loop[start:], *loop[:start]]) for start in range(len(loop)))


def _refused_on_the_way(loop: Sequence[Edge]) -> bool:
    topic = PROBE_TOPIC
    for edge in loop:
        policy = edge.policy()
        if is_cycle(policy, topic, edge.target):
            return True
        topic = policy.format_remote_topic(edge.source, topic)
    return False


def describe(loop: Sequence[str]) -> str:
    return " -> ".join(loop)
