import { describe, expect, it } from '@jest/globals';
import type { WorkflowDefinition } from '../workflows/workflow-definition.js';
import { WorkflowGraph } from '../workflows/workflow-graph.js';
import { greetingFor, systemPromptFor, transitionToolsFor } from './node-context.js';
import { templateContextOf } from './template.js';

const def: WorkflowDefinition = {
  nodes: [
    { id: 's', type: 'startCall', data: { name: 'S', prompt: 'Hello {{who}}', add_global_prompt: true, greeting: '  ' } },
    { id: 'a', type: 'agentNode', data: { name: 'A', prompt: 'A prompt', add_global_prompt: false } },
    { id: 'b', type: 'agentNode', data: { name: 'B', prompt: 'B prompt' } },
    { id: 'x', type: 'endCall', data: { name: 'X', prompt: 'X prompt', add_global_prompt: true } },
    { id: 'g', type: 'globalNode', data: { name: 'G', prompt: 'Global for {{who | nobody}}' } },
  ],
  edges: [
    { id: 'e1', source: 's', target: 'a', data: { label: 'To A!', condition: 'when {{who}} asks for A' } },
    { id: 'e2', source: 's', target: 'b', data: { label: 'to b', condition: 'otherwise' } },
    { id: 'e3', source: 'a', target: 'x', data: { label: 'end', condition: 'done' } },
    { id: 'e4', source: 'b', target: 'x', data: { label: 'end', condition: 'done' } },
  ],
};
const graph = WorkflowGraph.fromDefinition(def);
const ctx = templateContextOf({ who: 'Kim' }, {});
const now = new Date('2026-01-05T09:00:00Z');
const node = (id: string) => graph.requireNode(id);

describe('what the model is given at a node', () => {
  it('puts the rendered global prompt first only where add_global_prompt is true', () => {
    expect(systemPromptFor(graph, node('s'), ctx, now)).toBe('Global for Kim\n\nHello Kim');
    expect(systemPromptFor(graph, node('a'), ctx, now)).toBe('A prompt');
    expect(systemPromptFor(graph, node('b'), ctx, now)).toBe('B prompt'); // absent flag: no global prompt
    expect(systemPromptFor(graph, node('x'), ctx, now)).toBe('Global for Kim\n\nX prompt');
  });

  it('offers one parameterless tool per outgoing edge, named by the normalized label, described by the rendered condition', () => {
    expect(transitionToolsFor(graph, node('s'), ctx, now).map((t) => [t.spec, t.target.id])).toEqual([
      [{ name: 'to_a_', description: 'when Kim asks for A', parameters: { type: 'object', properties: {} } }, 'a'],
      [{ name: 'to_b', description: 'otherwise', parameters: { type: 'object', properties: {} } }, 'b'],
    ]);
    expect(transitionToolsFor(graph, node('x'), ctx, now)).toEqual([]);
  });

  it('has no greeting when it is absent or blank', () => {
    expect(greetingFor(node('s'), ctx, now)).toBeUndefined();
    expect(greetingFor(node('a'), ctx, now)).toBeUndefined();
  });
});
