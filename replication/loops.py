"""Loops in the flow graph that the replication policies cannot detect.

MM2 stops a loop by reading a topic's provenance from its name (``is_cycle``): with the default policy,
``us-west.orders`` is never sent back to us-west. A loop is safe only if, wherever a topic starts on it, some
flow on the way refuses it before it gets home. The identity policy keeps names, and mixed separators hide the
prefix, so such loops replicate records around forever. This module walks each loop with a probe topic and
asks ``replication.policy.is_cycle`` at every hop, so the rule is the data plane's own.

Pure functions over plain values; no Django.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from replication.config import POLICIES
from replication.policy import DefaultReplicationPolicy, IdentityReplicationPolicy, ReplicationPolicy, is_cycle

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
    the size of the graph rather than rebuilding it for each."""

    def __init__(self, edges: Iterable[Edge] = ()) -> None:
        self._out: dict[str, list[Edge]] = {}
        for edge in edges:
            self.add(edge)

    def add(self, edge: Edge) -> None:
        self._out.setdefault(edge.source, []).append(edge)

    def loop_of(self, new: Edge) -> list[str] | None:
        """As ``undetected_loop``, for ``new`` against the edges added so far (new itself not among them)."""
        for path in _paths(self._out, new.target, new.source):
            loop = [new, *path]
            if not _detected(loop):
                return [edge.source for edge in loop] + [new.source]
        return None


def _paths(graph: dict[str, list[Edge]], start: str, goal: str) -> Iterator[list[Edge]]:
    """Simple paths start -> goal, depth first, at most MAX_PATHS of them."""
    stack: list[tuple[str, list[Edge], frozenset[str]]] = [(start, [], frozenset({start}))]
    found = 0
    while stack and found < MAX_PATHS:
        node, path, seen = stack.pop()
        if node == goal:
            found += 1
            yield path
            continue
        for edge in graph.get(node, ()):
            if edge.target == goal or edge.target not in seen:
                stack.append((edge.target, [*path, edge], seen | {edge.target}))


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
