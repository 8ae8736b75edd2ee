// Geometry of the replication graph, in the graph's own pixels (x right, y down), with no drawing: clusters in
// columns by replication depth, spread over the canvas; each edge's label in a column of its own between two
// columns of clusters; every edge routed through a waypoint of its own in each column it crosses.
//
// It is Sugiyama's layered layout as dagre draws it: cycles broken by laying some edges out backwards, ranks by
// longest path, a waypoint (a slot) for every edge in every column between its ends, one of which holds its label,
// the order in each column from barycentre sweeps, and the slots of a column stacked with gaps. So by construction
// no label lies on a cluster or on another label, and an edge crosses a column only at its own slot, passing it
// level, so it clears every cluster it does not join; two flows between the same clusters are two curves through
// two slots. `clashes` counts what the construction still got wrong (0 is the promise the tests hold it to).
import { color } from "./palette.js";

export const NODE_RADIUS = 23;
const NAME_HEIGHT = 22; // the cluster's name under its marker (14 px bold)
const SLOT_GAP = 14; // px between two slots of a column
const WAYPOINT = 6; // px above and below the waypoint of an edge passing a column
const CLEARANCE = 8; // px an edge keeps from a cluster it does not join
const PAD = 14; // px from the canvas's edges
const MIN_GAP = 40; // px between two columns, where edges change height, before the graph takes another rank

// The edge colour of each health, from the current theme (mirrorplane.css): read again on every draw.
export function edgeColors() {
  const names = ["healthy", "lagging", "starting", "failing", "paused", "disabled", "hop"];
  const colors = Object.fromEntries(names.map((name) => [name, color(name)]));
  colors.unplaced = color("unplaced"); // a task no worker has a free slot for: distinct from a task that failed
  return colors;
}

// A first order of the clusters, left to right (Eades, Lin and Smyth's greedy heuristic for few backward edges):
// clusters nothing points to go left, clusters that point nowhere go right, else the one with the most edges out
// over edges in (by alias on a tie).
function greedyOrder(aliases, edges) {
  const left = [],
    right = [];
  const rest = new Set([...aliases].sort());
  const degree = (a, side) => edges.filter((e) => e[side] === a && rest.has(e.source) && rest.has(e.target)).length;
  while (rest.size) {
    const source = [...rest].find((a) => degree(a, "target") === 0);
    const sink = [...rest].find((a) => degree(a, "source") === 0);
    const delta = (a) => degree(a, "source") - degree(a, "target");
    if (!source && sink) {
      right.unshift(sink);
      rest.delete(sink);
      continue;
    }
    const pick = source ?? [...rest].reduce((best, a) => (delta(a) > delta(best) ? a : best));
    left.push(pick);
    rest.delete(pick);
  }
  return [...left, ...right];
}

// Ranks from an order of the clusters: each edge points forward in the order (a backward edge is laid out
// reversed), a cluster's rank is its longest path from a cluster nothing points to; then each such cluster moves
// right to just before its nearest target, so a fan-out source does not stretch its edges across the canvas.
function ranked(sequence, edges) {
  const at = Object.fromEntries(sequence.map((a, i) => [a, i]));
  const dag = edges.map((e) =>
    at[e.source] < at[e.target] ? { from: e.source, to: e.target } : { from: e.target, to: e.source },
  );
  const rank = Object.fromEntries(sequence.map((a) => [a, 0]));
  const out = Object.fromEntries(sequence.map((a) => [a, []]));
  for (const e of dag) out[e.from].push(e.to);
  for (const a of sequence) for (const t of out[a]) rank[t] = Math.max(rank[t], rank[a] + 1);
  const pointedTo = new Set(dag.map((e) => e.to));
  for (const a of sequence) {
    if (out[a].length && !pointedTo.has(a)) rank[a] = Math.min(...out[a].map((t) => rank[t])) - 1;
  }
  const low = Math.min(...Object.values(rank));
  for (const a of sequence) rank[a] -= low;
  const columns = Math.max(...Object.values(rank)) + 1;
  const backward = edges.filter((e, i) => dag[i].from !== e.source).length;
  const span = dag.reduce((sum, e) => sum + rank[e.to] - rank[e.from], 0);
  // The edges crossing the busiest gap between two ranks: each has a slot there, so they set the canvas's height.
  const crossing = new Array(columns).fill(0);
  for (const e of dag) for (let r = rank[e.from]; r < rank[e.to]; r += 1) crossing[r] += 1;
  return { rank, dag, columns, backward, span, busiest: Math.max(...crossing) };
}

// The greedy order, improved by swapping two clusters while that lowers, in turn: the ranks beyond what the
// canvas holds (`most`), the edges crossing the busiest gap, the edges laid out backwards, the number of ranks,
// the ranks all edges span. The last answer is kept: the dashboard lays the same clusters and flows out again
// every few seconds, and the swaps are most of a layout's time (a 12-cluster, 40-flow graph: ~100 of ~300 ms).
let lastRanks = { of: null, value: null };

export function ranks(aliases, edges, most = Infinity) {
  const of = JSON.stringify([aliases, edges.map((e) => [e.source, e.target]), most]);
  if (lastRanks.of !== of) lastRanks = { of, value: swapped(aliases, edges, most) };
  return lastRanks.value;
}

function swapped(aliases, edges, most) {
  const key = (r) => [Math.max(0, r.columns - most), r.busiest + 2 * r.backward, r.columns, r.span];
  const better = (a, b) =>
    (key(a)
      .map((v, i) => v - key(b)[i])
      .find((d) => d !== 0) ?? 0) < 0;
  let sequence = greedyOrder(aliases, edges);
  let best = ranked(sequence, edges);
  // Each pass tries every swap: a few passes settle a dashboard-sized graph; a large one keeps the greedy order.
  for (let pass = 0, improved = aliases.length <= 24; improved && pass < 4; pass += 1) {
    improved = false;
    for (let i = 0; i < sequence.length; i += 1) {
      for (let j = i + 1; j < sequence.length; j += 1) {
        const trial = [...sequence];
        [trial[i], trial[j]] = [trial[j], trial[i]];
        const tried = ranked(trial, edges);
        if (better(tried, best)) [sequence, best, improved] = [trial, tried, true];
      }
    }
  }
  return best;
}

// Columns of slots: a cluster at rank r is in column 2r; an edge has a slot in every column between its ends,
// the middle odd one holding its label. A slot reaches `above` and `below` its point, and is `wide` across.
function columns(nodes, edges, dag, rank) {
  const cols = [];
  const slot = (c, s) => {
    (cols[c] ||= []).push(s);
    return s;
  };
  for (const n of [...nodes].sort((a, b) => a.alias.localeCompare(b.alias))) {
    const half = Math.max(NODE_RADIUS, n.nameWidth / 2 + 2);
    slot(2 * rank[n.alias], {
      node: n.alias,
      above: NODE_RADIUS,
      below: NODE_RADIUS + NAME_HEIGHT,
      wide: 2 * (half + CLEARANCE),
      reach: half,
    });
  }
  const chains = dag.map(({ from, to }, i) => {
    const [a, b] = [2 * rank[from], 2 * rank[to]];
    const labelled = a + 1 + 2 * Math.floor((b - a - 1) / 4);
    const chain = [cols[a].find((s) => s.node === from)];
    for (let c = a + 1; c < b; c += 1) {
      const { w, h } = edges[i].label;
      chain.push(slot(c, c === labelled ? { edge: i, above: h / 2, below: h / 2, wide: w } : waypoint(i)));
    }
    chain.push(cols[b].find((s) => s.node === to));
    return chain;
  });
  for (let c = 0; c < cols.length; c += 1) cols[c] ||= [];
  const links = chains.flatMap((chain) => chain.slice(1).map((s, k) => [chain[k], s]));
  return { cols, links, chains };
}

function waypoint(edge) {
  return { edge, above: WAYPOINT, below: WAYPOINT, wide: 0 };
}

function crossings(cols, links) {
  const at = new Map(cols.flatMap((col, c) => col.map((s, i) => [s, { c, i }])));
  let count = 0;
  for (let i = 0; i < links.length; i += 1) {
    const [a, b] = links[i].map((s) => at.get(s));
    for (let j = i + 1; j < links.length; j += 1) {
      const [c, d] = links[j].map((s) => at.get(s));
      if (a.c === c.c && (a.i - c.i) * (b.i - d.i) < 0) count += 1;
    }
  }
  return count;
}

// Barycentre sweeps, down the columns then back, keeping the order with the fewest crossings seen.
function order(cols, links) {
  let best = cols.map((c) => [...c]);
  let fewest = crossings(best, links);
  for (let sweep = 0; sweep < 8 && fewest > 0; sweep += 1) {
    const forward = sweep % 2 === 0;
    for (let k = 1; k < cols.length; k += 1) {
      const c = forward ? k : cols.length - 1 - k;
      const fixed = new Map(cols[forward ? c - 1 : c + 1].map((s, i) => [s, i]));
      const near = (s) => links.filter((l) => l[forward ? 1 : 0] === s).map((l) => fixed.get(l[forward ? 0 : 1]));
      const bary = new Map(
        cols[c].map((s, i) => {
          const at = near(s).filter((v) => v !== undefined);
          return [s, at.length ? at.reduce((x, y) => x + y, 0) / at.length : i];
        }),
      );
      cols[c].sort((a, b) => bary.get(a) - bary.get(b));
    }
    const count = crossings(cols, links);
    if (count < fewest) [best, fewest] = [cols.map((c) => [...c]), count];
  }
  return best;
}

// Columns as wide as their widest slot, the width left over shared between the gaps (at least MIN_GAP each:
// a graph of more ranks than the canvas holds gets a wider canvas); in each column the slots stacked SLOT_GAP
// apart and the height left over shared around them (a column taller than the canvas makes it taller).
// Returns the canvas's size.
function place(cols, width, height) {
  const wide = cols.map((col) => Math.max(0, ...col.map((s) => s.wide)));
  const used = wide.reduce((x, y) => x + y, 0);
  const broad = Math.max(width, 2 * PAD + used + MIN_GAP * (cols.length - 1));
  const gap = cols.length > 1 ? (broad - 2 * PAD - used) / (cols.length - 1) : 0;
  let x = cols.length > 1 ? PAD : (broad - wide[0]) / 2;
  const needs = cols.map((col) => col.reduce((sum, s) => sum + s.above + s.below, 0) + SLOT_GAP * (col.length - 1));
  const tall = Math.max(height, 2 * PAD + Math.max(...needs));
  cols.forEach((col, c) => {
    const spare = (tall - 2 * PAD - needs[c]) / col.length;
    let y = PAD + spare / 2;
    for (const s of col) {
      Object.assign(s, { x: x + wide[c] / 2, y: y + s.above, half: wide[c] / 2 });
      y += s.above + s.below + SLOT_GAP + spare;
    }
    x += wide[c] + gap;
  });
  return { width: broad, height: tall };
}

function add(p, v, k) {
  return { x: p.x + v.x * k, y: p.y + v.y * k };
}

// Cubic Bézier segments through the points, level at every point: an edge leaves and reaches a cluster
// sideways (never over the name under it) and crosses each column at its own slot's height.
export function route(points) {
  const last = points.length - 1;
  const tangent = (i) => {
    const [p, q] = [points[Math.max(0, i - 1)], points[Math.min(last, i + 1)]];
    return { x: (q.x - p.x) / (i === 0 || i === last ? 1 : 2), y: 0 };
  };
  const segments = [];
  for (let i = 0; i < last; i += 1) {
    const [a, b] = [points[i], points[i + 1]];
    segments.push([a, add(a, tangent(i), 1 / 3), add(b, tangent(i + 1), -1 / 3), b]);
  }
  return segments;
}

// Where each edge meets its clusters: on the side it comes from, edges from several slots spread down the
// marker's rim in the order of those slots, so arrows into one cluster do not overlap.
function ports(chains, centres) {
  const ends = {};
  chains.forEach((chain, i) => {
    for (const [end, next] of [
      [0, 1],
      [chain.length - 1, chain.length - 2],
    ]) {
      const node = chain[end].node;
      const side = chain[next].x < chain[end].x ? -1 : 1;
      (ends[`${node} ${side}`] ||= []).push({ i, end, side, node, y: chain[next].y });
    }
  });
  const at = chains.map(() => ({}));
  for (const group of Object.values(ends)) {
    group.sort((a, b) => a.y - b.y || a.i - b.i);
    const step = group.length > 1 ? Math.min(12, (1.2 * NODE_RADIUS) / (group.length - 1)) : 0;
    group.forEach((e, k) => {
      const dy = (k - (group.length - 1) / 2) * step;
      const c = centres[e.node];
      at[e.i][e.end] = { x: c.x + e.side * (Math.sqrt(NODE_RADIUS ** 2 - dy ** 2) + 1), y: c.y + dy };
    });
  }
  return at;
}

function bezier([p0, p1, p2, p3], t) {
  const u = 1 - t;
  const w = [u * u * u, 3 * u * u * t, 3 * u * t * t, t * t * t];
  return {
    x: w[0] * p0.x + w[1] * p1.x + w[2] * p2.x + w[3] * p3.x,
    y: w[0] * p0.y + w[1] * p1.y + w[2] * p2.y + w[3] * p3.y,
  };
}

// Points along the segments, every few pixels.
export function sample(segments) {
  const points = [segments[0][0]];
  for (const s of segments) {
    const steps = Math.max(8, Math.ceil(Math.hypot(s[3].x - s[0].x, s[3].y - s[0].y) / 4));
    for (let k = 1; k <= steps; k += 1) points.push(bezier(s, k / steps));
  }
  return points;
}

export function svgPath(segments) {
  const f = (p) => `${p.x.toFixed(1)},${p.y.toFixed(1)}`;
  return `M ${f(segments[0][0])} ${segments.map((s) => `C ${f(s[1])} ${f(s[2])} ${f(s[3])}`).join(" ")}`;
}

// The arrow head: a triangle whose tip is the edge's end on the target's rim, along the curve's last direction.
function arrowHead(segments) {
  const [, , c, tip] = segments[segments.length - 1];
  const d = Math.hypot(tip.x - c.x, tip.y - c.y) || 1;
  const u = { x: (tip.x - c.x) / d, y: (tip.y - c.y) / d };
  const base = add(tip, u, -12);
  const f = (p) => `${p.x.toFixed(1)},${p.y.toFixed(1)}`;
  return `M ${f(tip)} L ${f(add(base, { x: -u.y, y: u.x }, 6))} L ${f(add(base, { x: u.y, y: -u.x }, 6))} Z`;
}

// A slot's own box: a cluster's reaches its name's half width (its column keeps CLEARANCE more on either side).
function box(s) {
  const reach = s.reach ?? s.wide / 2;
  return { l: s.x - reach, r: s.x + reach, t: s.y - s.above, b: s.y + s.below };
}

function overlaps(a, b) {
  return a.l < b.r && b.l < a.r && a.t < b.b && b.t < a.b;
}

// What the construction promises, checked: no label box on a cluster's box or on another label's, no edge within
// CLEARANCE of the box of a cluster it does not join.
function clashes(cols, routed, edges) {
  const slots = cols.flat();
  const nodes = slots.filter((s) => s.node);
  const labels = slots.filter((s) => s.edge !== undefined && s.wide);
  let count = 0;
  labels.forEach((l, i) => {
    count += nodes.filter((n) => overlaps(box(l), box(n))).length;
    count += labels.slice(i + 1).filter((m) => overlaps(box(l), box(m))).length;
  });
  routed.forEach((r, i) => {
    for (const n of nodes) {
      if (n.node === edges[i].source || n.node === edges[i].target) continue;
      const b = box(n);
      const near = (p) =>
        p.x > b.l - CLEARANCE && p.x < b.r + CLEARANCE && p.y > b.t - CLEARANCE && p.y < b.b + CLEARANCE;
      if (r.points.some(near)) count += 1;
    }
  });
  return count;
}

// The layout on a canvas `width` wide and at least `height` tall. nodes: [{alias, nameWidth}]; edges:
// [{source, target, label: {w, h}}]. Returns the canvas's width and height (more when the graph needs it), each
// cluster's centre, each edge's path, arrow head and label centre, and `clashes` (0 when it kept its promise).
export function layout(nodes, edges, width, height) {
  const aliases = nodes.map((n) => n.alias);
  // The ranks the width holds, for labels up to the next 40 px: a rate that gains a digit does not re-rank the
  // graph under the reader's eyes at the next refresh.
  const widest = Math.max(2 * NODE_RADIUS, ...nodes.map((n) => n.nameWidth + 4)) + 2 * CLEARANCE;
  const label = 40 * Math.ceil(Math.max(0, ...edges.map((e) => e.label.w)) / 40);
  const most = 1 + Math.floor((width - 2 * PAD - widest) / (widest + label + 2 * MIN_GAP));
  const { rank, dag } = ranks(aliases, edges, most);
  const { cols, links, chains } = columns(nodes, edges, dag, rank);
  const ordered = order(cols, links);
  const size = place(ordered, width, height);
  const centres = Object.fromEntries(
    ordered
      .flat()
      .filter((s) => s.node)
      .map((s) => [s.node, { x: s.x, y: s.y }]),
  );
  const port = ports(chains, centres);
  const routed = edges.map((e, i) => {
    // Level across the whole width of each column it crosses: under its own label, and clear of every other slot.
    const last = chains[i].length - 1;
    // From a cluster, level to the edge of its column too: the curve changes height only between columns.
    const chain = chains[i].flatMap((s, k) => {
      if (k !== 0 && k !== last)
        return [
          { x: s.x - s.half, y: s.y },
          { x: s.x + s.half, y: s.y },
        ];
      const p = port[i][k];
      const out = { x: s.x + Math.sign(p.x - s.x) * Math.max(s.half, Math.abs(p.x - s.x)), y: p.y };
      return k === 0 ? [p, out] : [out, p];
    });
    const segments = route(dag[i].from === e.source ? chain : chain.reverse());
    return { segments, points: sample(segments) };
  });
  return {
    ...size,
    nodes: centres,
    clashes: clashes(ordered, routed, edges),
    edges: routed.map((r, i) => {
      const at = chains[i].find((s) => s.wide && s.edge === i);
      return { path: svgPath(r.segments), arrow: arrowHead(r.segments), label: at };
    }),
  };
}
