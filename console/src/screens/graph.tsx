// The agent's graph as an SVG diagram: nodes in layers by their distance from the start node, edges as curves
// with their label and condition. Nodes and edges are focusable buttons (Enter/Space selects them).

export interface GNode {
  id: string;
  type: 'startCall' | 'agentNode' | 'endCall' | 'globalNode';
  position?: { x: number; y: number };
  data: Record<string, any>;
}
export interface GEdge {
  id: string;
  source: string;
  target: string;
  data: { label: string; condition: string };
}
export interface Definition {
  nodes: GNode[];
  edges: GEdge[];
}

const W = 190;
const H = 58;
const GAP_X = 90;
const GAP_Y = 110;
const PAD = 24;

/** Positions (top-left) of every node: BFS layers from startCall; the global node and unreachable ones last. */
export function layout(def: Definition): Map<string, { x: number; y: number }> {
  const depth = new Map<string, number>();
  const start = def.nodes.find((n) => n.type === 'startCall');
  if (start) {
    depth.set(start.id, 0);
    const queue = [start.id];
    while (queue.length) {
      const id = queue.shift()!;
      for (const e of def.edges) {
        if (e.source === id && !depth.has(e.target)) {
          depth.set(e.target, depth.get(id)! + 1);
          queue.push(e.target);
        }
      }
    }
  }
  const maxDepth = Math.max(0, ...depth.values());
  const layers: string[][] = [];
  for (const n of def.nodes) {
    const d = n.type === 'globalNode' ? -1 : depth.get(n.id) ?? maxDepth + 1;
    if (d === -1) continue;
    (layers[d] ??= []).push(n.id);
  }
  // keep the author's left-to-right order within a layer where positions exist
  const byId = new Map(def.nodes.map((n) => [n.id, n]));
  for (const l of layers) l?.sort((a, b) => (byId.get(a)?.position?.x ?? 0) - (byId.get(b)?.position?.x ?? 0));
  const widest = Math.max(1, ...layers.map((l) => l?.length ?? 0));
  const out = new Map<string, { x: number; y: number }>();
  layers.forEach((l, d) => {
    if (!l) return;
    const offset = ((widest - l.length) * (W + GAP_X)) / 2;
    l.forEach((id, i) => out.set(id, { x: PAD + offset + i * (W + GAP_X), y: PAD + d * (H + GAP_Y) }));
  });
  const global = def.nodes.find((n) => n.type === 'globalNode');
  if (global) out.set(global.id, { x: PAD + widest * (W + GAP_X), y: PAD });
  return out;
}

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

export function GraphView(props: {
  def: Definition;
  selected?: string | null;
  current?: string | null;
  visited?: Set<string>;
  invalid?: Map<string, string[]>;
  onSelect?: (kind: 'node' | 'edge', id: string) => void;
}) {
  const { def } = props;
  const pos = layout(def);
  let width = 0;
  let height = 0;
  for (const p of pos.values()) {
    width = Math.max(width, p.x + W + PAD);
    height = Math.max(height, p.y + H + PAD);
  }
  const activate = (kind: 'node' | 'edge', id: string) => (e: KeyboardEvent | MouseEvent) => {
    if (e instanceof KeyboardEvent && e.key !== 'Enter' && e.key !== ' ') return;
    e.preventDefault();
    props.onSelect?.(kind, id);
  };
  return (
    <svg class="graph" viewBox={`0 0 ${width} ${height}`} width={width} height={height} role="group" aria-label="Agent graph">
      <defs>
        <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
          <path d="M0,0 L10,5 L0,10 z" fill="#4b5563" />
        </marker>
      </defs>
      {def.edges.map((e) => {
        const a = pos.get(e.source);
        const b = pos.get(e.target);
        if (!a || !b) return null;
        const forward = b.y > a.y;
        const x1 = a.x + W / 2;
        const y1 = forward ? a.y + H : a.y + H / 2;
        const x2 = b.x + W / 2;
        const y2 = forward ? b.y : b.y + H / 2;
        const d = forward
          ? `M${x1},${y1} C${x1},${y1 + GAP_Y / 2} ${x2},${y2 - GAP_Y / 2} ${x2},${y2}`
          : `M${a.x + W},${y1} C${a.x + W + 100},${y1} ${b.x + W + 100},${y2} ${b.x + W},${y2}`;
        // labels sit nearer the target, so the edges fanning out of one node keep theirs apart
        const mx = forward ? x1 + (x2 - x1) * 0.72 : Math.max(a.x, b.x) + W + 75;
        const my = forward ? y1 + (y2 - y1) * 0.55 : (y1 + y2) / 2;
        const errors = props.invalid?.get(`edge:${e.id}`);
        const cls = ['edge', props.selected === `edge:${e.id}` ? 'selected' : '', errors ? 'invalid' : ''].join(' ');
        return (
          <g class={cls} key={e.id} tabindex={0} role="button" aria-label={`Edge ${e.data.label}: ${e.data.condition}${errors ? ` (error: ${errors.join('; ')})` : ''}`} onClick={activate('edge', e.id)} onKeyDown={activate('edge', e.id)} data-edge={e.id}>
            <path d={d} fill="none" marker-end="url(#arrow)" />
            <path d={d} fill="none" class="hit" />
            <g transform={`translate(${mx},${my})`}>
              <rect x={-80} y={-17} width={160} height={34} rx={5} class="edge-label" />
              <text y={-3} text-anchor="middle" class="edge-name">
                {clip(e.data.label || '(no label)', 24)}
              </text>
              <text y={11} text-anchor="middle" class="edge-cond">
                {clip(e.data.condition || '(no condition)', 30)}
              </text>
              <title>{`${e.data.label}: ${e.data.condition}`}</title>
            </g>
          </g>
        );
      })}
      {def.nodes.map((n) => {
        const p = pos.get(n.id);
        if (!p) return null;
        const errors = props.invalid?.get(`node:${n.id}`);
        const cls = [
          'node',
          n.type,
          props.selected === `node:${n.id}` ? 'selected' : '',
          props.current === n.id ? 'current' : '',
          props.visited?.has(n.id) ? 'visited' : '',
          errors ? 'invalid' : '',
        ].join(' ');
        const label = `${n.type === 'startCall' ? 'Start' : n.type === 'endCall' ? 'End' : n.type === 'globalNode' ? 'Global' : 'Step'} node ${n.data.name || n.id}${props.current === n.id ? ' (current)' : ''}${errors ? ` (error: ${errors.join('; ')})` : ''}`;
        return (
          <g class={cls} key={n.id} transform={`translate(${p.x},${p.y})`} tabindex={0} role="button" aria-label={label} aria-pressed={props.selected === `node:${n.id}`} onClick={activate('node', n.id)} onKeyDown={activate('node', n.id)} data-node={n.id}>
            <rect width={W} height={H} rx={n.type === 'agentNode' ? 8 : 28} />
            <text x={W / 2} y={23} text-anchor="middle" class="node-name">
              {clip(n.data.name || n.id, 24)}
            </text>
            <text x={W / 2} y={42} text-anchor="middle" class="node-type">
              {errors ? '⚠ ' : ''}
              {n.type}
              {n.data.extraction_enabled ? ' · extracts' : ''}
            </text>
            <title>{errors ? errors.join('\n') : n.data.prompt}</title>
          </g>
        );
      })}
    </svg>
  );
}
