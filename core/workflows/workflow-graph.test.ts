import { describe, expect, it } from '@jest/globals';
import { exampleWorkflowDefinition } from './example-definition.js';
import { Graph, WorkflowGraph, normalizeEdgeLabel, type GraphEdgeShape, type GraphNodeShape } from './workflow-graph.js';

describe('WorkflowGraph', () => {
  const graph = WorkflowGraph.fromDefinition(structuredClone(exampleWorkflowDefinition));

  it('finds the start node, the globalNode and nodes by id', () => {
    expect(graph.start.id).toBe('start');
    expect(graph.globalNode?.id).toBe('global');
    expect(graph.node('confirm')?.data.name).toBe('Confirm appointment');
    expect(graph.node('nope')).toBeUndefined();
    expect(() => graph.requireNode('nope')).toThrow("node 'nope' is not in this workflow definition");
  });

  it('lists the transitions leaving a node with their tool names and targets, in definition order', () => {
    expect(graph.transitions('confirm').map((t) => [t.toolName, t.target.id, t.edge.data.condition])).toEqual([
      ['will_attend', 'end_confirmed', 'The caller confirms they will come at the booked time.'],
      ['needs_another_time', 'reschedule', 'The caller cannot make the booked time or asks to move it.'],
    ]);
    expect(graph.transitions('end_confirmed')).toEqual([]);
  });

  it('refuses a definition without a startCall node', () => {
    expect(() => WorkflowGraph.fromDefinition({ nodes: [], edges: [] })).toThrow(/startCall/);
  });
});

describe('Graph over half-formed items (the validator view)', () => {
  it('resolves an id to its first node, skips items without ids and knows incoming edges', () => {
    const a1 = { id: 'a', type: 'agentNode' as const };
    const a2 = { id: 'a', type: 'endCall' as const };
    const g = new Graph<GraphNodeShape, GraphEdgeShape>([a1, a2, {}], [{ source: 'a', target: 'b', label: 'Go On' }, { target: 'a' }]);
    expect(g.node('a')).toBe(a1);
    expect(g.outEdges('a')).toHaveLength(1);
    expect(g.toolName(g.outEdges('a')[0])).toBe('go_on');
    expect(g.toolName({})).toBeUndefined();
    expect(g.hasIncomingEdge('a')).toBe(true);
    expect(g.hasIncomingEdge('c')).toBe(false);
    expect(g.startNode).toBeUndefined();
  });

  it('normalizes labels the one way tool names need', () => {
    expect(normalizeEdgeLabel('Needs another time!')).toBe('needs_another_time_');
  });
});
