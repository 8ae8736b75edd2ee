"""Loops that the replication policies cannot detect, judged by replication.mm2.policy.is_cycle itself."""

from __future__ import annotations

from replication.mm2.cycles import Edge, FlowGraph, undetected_loop

IDENTITY = "IdentityReplicationPolicy"


def test_default_policy_loops_are_detected_by_topic_prefixes() -> None:
    assert undetected_loop([Edge("a", "b")], Edge("b", "a")) is None
    assert undetected_loop([Edge("a", "b"), Edge("b", "c")], Edge("c", "a")) is None


def test_an_identity_flow_anywhere_on_a_loop_makes_it_undetectable() -> None:
    assert undetected_loop([Edge("a", "b", IDENTITY)], Edge("b", "a")) == ["b", "a", "b"]
    assert undetected_loop([Edge("a", "b")], Edge("b", "a", IDENTITY)) == ["b", "a", "b"]
    assert undetected_loop([Edge("a", "b"), Edge("b", "c", IDENTITY)], Edge("c", "a")) == ["c", "a", "b", "c"]


def test_differing_separators_hide_the_prefix() -> None:
    assert undetected_loop([Edge("a", "b", separator="_")], Edge("b", "a")) == ["b", "a", "b"]


def test_identity_flows_without_a_loop_are_fine() -> None:
    assert undetected_loop([Edge("a", "b", IDENTITY), Edge("b", "c", IDENTITY)], Edge("a", "c", IDENTITY)) is None


def test_the_flow_being_replaced_is_not_counted_twice() -> None:
    assert undetected_loop([Edge("a", "b", IDENTITY), Edge("b", "a")], Edge("a", "b")) is None


def test_a_flow_graph_checks_flows_one_after_another_as_an_import_adds_them() -> None:
    graph = FlowGraph([Edge("a", "b", "IdentityReplicationPolicy")])
    new = Edge("b", "a", "IdentityReplicationPolicy")
    assert graph.loop_of(new) == ["b", "a", "b"] == undetected_loop([Edge("a", "b", "IdentityReplicationPolicy")], new)
    graph.add(Edge("b", "c"))
    assert graph.loop_of(Edge("c", "b")) is None  # the default policy detects it


def test_paths_are_the_simple_paths_depth_first_in_target_order_up_to_the_limit() -> None:
    added = [("c", "d"), ("b", "d"), ("c", "a"), ("a", "c"), ("b", "c"), ("a", "b"), ("d", "b")]
    graph = FlowGraph(Edge(source, target) for source, target in added)
    found = [["a", *(edge.target for edge in path)] for path in graph.paths("a", "d")]
    assert found == [["a", "c", "d"], ["a", "b", "d"], ["a", "b", "c", "d"]]  # c -> a and d -> b close no path
    assert [[e.target for e in path] for path in graph.paths("a", "d", limit=2)] == [["c", "d"], ["b", "d"]]
    assert list(graph.paths("d", "a")) == [[Edge("d", "b"), Edge("b", "c"), Edge("c", "a")]]
    assert list(graph.paths("a", "e")) == []
