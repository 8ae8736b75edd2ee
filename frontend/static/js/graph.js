// Geometry of the replication graph: node positions by replication depth, and edge curves that never overlap.
import { color } from "./palette.js";

// The edge colour of each health, from the current theme (mirrorplane.css): read again on every draw.
export function edgeColors() {
  const names = ["healthy", "lagging", "starting", "failing", "paused", "disabled", "hop"];
  const colors = Object.fromEntries(names.map((name) => [name, color(name)]));
  colors.unplaced = color("unplaced"); // a task no worker has a free slot for: distinct from a task that failed
  return colors;
}

// Rank = longest path from a cluster no flow points to (cycles bounded), so sources sit left of their targets.
export function positions(nodes, edges) {
  const rank = Object.fromEntries(nodes.map((n) => [n.alias, 0]));
  for (let round = 0; round < nodes.length; round += 1) {
    for (const e of edges) {
      if (e.source in rank && e.target in rank && rank[e.target] < rank[e.source] + 1) {
        rank[e.target] = Math.min(rank[e.source] + 1, nodes.length - 1);
      }
    }
  }
  const columns = {};
  for (const n of nodes) (columns[rank[n.alias]] ||= []).push(n.alias);
  const ranks = Object.keys(columns)
    .map(Number)
    .sort((a, b) => a - b);
  const place = {};
  ranks.forEach((r, column) => {
    const names = columns[r].sort();
    names.forEach((alias, i) => {
      place[alias] = { x: column, y: (names.length - 1) / 2 - i };
    });
  });
  return place;
}

// A quadratic curve from a to b that bends to the left of travel by `bend` (0: straight).
export function curve(a, b, bend) {
  const mx = (a.x + b.x) / 2,
    my = (a.y + b.y) / 2;
  const dx = b.x - a.x,
    dy = b.y - a.y;
  const length = Math.hypot(dx, dy) || 1;
  const nx = -dy / length,
    ny = dx / length;
  const c = { x: mx + nx * bend * length, y: my + ny * bend * length };
  return {
    a,
    b,
    c,
    mid: { x: 0.25 * a.x + 0.5 * c.x + 0.25 * b.x, y: 0.25 * a.y + 0.5 * c.y + 0.25 * b.y },
    normal: { x: nx, y: ny },
  };
}

// Point and direction at parameter t of the curve (for the arrow head just before the target node).
export function at(k, t) {
  const u = 1 - t;
  const point = {
    x: u * u * k.a.x + 2 * u * t * k.c.x + t * t * k.b.x,
    y: u * u * k.a.y + 2 * u * t * k.c.y + t * t * k.b.y,
  };
  const tangent = {
    x: 2 * u * (k.c.x - k.a.x) + 2 * t * (k.b.x - k.c.x),
    y: 2 * u * (k.c.y - k.a.y) + 2 * t * (k.b.y - k.c.y),
  };
  return { point, tangent };
}

export function svgPath(k) {
  return `M ${k.a.x},${k.a.y} Q ${k.c.x},${k.c.y} ${k.b.x},${k.b.y}`;
}

// Bend of each flow: straight unless the reverse flow exists too, then both bow apart.
export function bends(edges) {
  const pairs = new Set(edges.map((e) => `${e.source}>${e.target}`));
  return edges.map((e) => (pairs.has(`${e.target}>${e.source}`) ? 0.14 : 0));
}
