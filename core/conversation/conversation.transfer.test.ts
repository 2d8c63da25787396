import { describe, expect, it } from '@jest/globals';
import { ScriptedLanguageModel, VirtualClock } from '../../test/fakes/scripted-language-model.js';
import type { WorkflowDefinition } from '../workflows/workflow-definition.js';
import { WorkflowGraph } from '../workflows/workflow-graph.js';
import { Conversation } from './conversation.js';

/** start → (wants a human) → endCall that hands over to `transferTo`; the start node extracts `dept_phone`. */
function graph(transferTo: string | undefined, disposition?: string): WorkflowGraph {
  const def: WorkflowDefinition = {
    nodes: [
      {
        id: 's', type: 'startCall',
        data: {
          name: 'Start', prompt: 'START PROMPT',
          extraction_enabled: true, extraction_variables: [{ name: 'dept_phone', type: 'string', prompt: 'the department number' }],
        },
      },
      {
        id: 'h', type: 'endCall',
        data: { name: 'Hand over', prompt: 'HANDOVER PROMPT', ...(transferTo === undefined ? {} : { transfer_to: transferTo }), ...(disposition ? { disposition } : {}) },
      },
    ],
    edges: [{ id: 'e', source: 's', target: 'h', data: { label: 'Human', condition: 'the caller wants a person' } }],
  };
  return WorkflowGraph.fromDefinition(def);
}

function script(deptPhone: string | null = '+1 555 000 1234'): ScriptedLanguageModel {
  return new ScriptedLanguageModel()
    .on({ system: 'START PROMPT', user: /person/ }, { toolCalls: [{ name: 'human' }] })
    .on({ noTools: true }, { text: 'Connecting you now.' })
    .onExtract({}, { value: { dept_phone: deptPhone } });
}

async function endAtHandover(transferTo: string | undefined, opts: { deptPhone?: string | null; disposition?: string; context?: Record<string, unknown> } = {}) {
  const convo = Conversation.start({
    graph: graph(transferTo, opts.disposition),
    model: { lm: script(opts.deptPhone === undefined ? '+1 555 000 1234' : opts.deptPhone), model: 'm' },
    clock: new VirtualClock(),
    initialContext: opts.context ?? { manager: '+15559876543' },
  });
  const events = await convo.send('Can I talk to a person?').collect();
  return { events, state: convo.state };
}

describe('Conversation: an endCall node with transfer_to', () => {
  it('ends with disposition transferred, ended.transfer {to} rendered and normalized, a "would transfer" note', async () => {
    const { events, state } = await endAtHandover('{{manager}}');
    expect(events.at(-1)).toEqual({ type: 'ended', reason: 'end_node', disposition: 'transferred', transfer: { to: '+15559876543', valid: true } });
    expect(state).toMatchObject({ status: 'ended', disposition: 'transferred', transfer: { to: '+15559876543', valid: true } });
    expect(state.gathered_context).toMatchObject({ mapped_call_disposition: 'transferred', transfer_to: '+15559876543' });
    const notes = state.messages.filter((m) => m.role === 'system').map((m) => m.text);
    expect(notes).toContain('Would transfer to +15559876543.');
    // the last words were said first
    expect(state.messages.filter((m) => m.role === 'assistant').at(-1)?.text).toBe('Connecting you now.');
  });

  it('renders with values gathered at the ending (the node\'s extraction runs first) and wins over the node disposition', async () => {
    const { events } = await endAtHandover('{{gathered_context.dept_phone}}', { disposition: 'escalated' });
    expect(events.at(-1)).toMatchObject({ disposition: 'transferred', transfer: { to: '+15550001234', valid: true } });
  });

  it('a SIP URI template', async () => {
    const { events } = await endAtHandover('sip:{{ext | 100}}@pbx.example.com', { context: {} });
    expect(events.at(-1)).toMatchObject({ transfer: { to: 'sip:100@pbx.example.com', valid: true } });
  });

  it('a target that renders to nothing usable ends transfer_failed with the raw text and no valid target', async () => {
    const { events, state } = await endAtHandover('{{missing}}', { context: {} });
    expect(events.at(-1)).toEqual({ type: 'ended', reason: 'end_node', disposition: 'transfer_failed', transfer: { to: '', valid: false } });
    expect(state.messages.some((m) => m.role === 'system' && m.text.includes('neither an E.164 number nor a SIP URI'))).toBe(true);
  });

  it('without transfer_to nothing changes: the node disposition, no transfer', async () => {
    const { events, state } = await endAtHandover(undefined, { disposition: 'escalated' });
    expect(events.at(-1)).toEqual({ type: 'ended', reason: 'end_node', disposition: 'escalated' });
    expect(state.transfer).toBeUndefined();
  });

  it('a hang-up during the last words transfers nobody', async () => {
    const convo = Conversation.start({ graph: graph('+15559876543'), model: { lm: script(), model: 'm' }, clock: new VirtualClock() });
    const turn = convo.send('Can I talk to a person?');
    const events: unknown[] = [];
    for await (const e of turn) {
      events.push(e);
      if (e.type === 'transition') break; // the caller leaves as the agent moves to the hand-over
    }
    const ended = await convo.hangUp().collect();
    expect(ended.at(-1)).toEqual({ type: 'ended', reason: 'hang_up', disposition: 'completed' });
    expect(convo.state.transfer).toBeUndefined();
  });
});
