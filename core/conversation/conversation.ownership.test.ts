import { describe, expect, it } from '@jest/globals';
import { ScriptedLanguageModel, VirtualClock } from '../../test/fakes/scripted-language-model.js';
import { ConflictError } from '../errors.js';
import type { LanguageModel, LanguageModelEvent, StreamRequest } from '../ports/language-model.port.js';
import { exampleWorkflowDefinition } from '../workflows/example-definition.js';
import type { WorkflowDefinition } from '../workflows/workflow-definition.js';
import { WorkflowGraph } from '../workflows/workflow-graph.js';
import { Conversation, type ConversationOptions } from './conversation.js';
import type { ConversationState } from './conversation-state.js';

// Who owns a conversation's state: `resume` copies it, `adopt` takes the object it is given, `release` hands the
// state over without a copy and ends the conversation's use (a chat turn: read, run, store, answer).

const CONTEXT = { first_name: 'Dana', appointment_time: 'Tuesday at 3pm' };

function setup(lm: LanguageModel): ConversationOptions {
  return { graph: WorkflowGraph.fromDefinition(structuredClone(exampleWorkflowDefinition)), model: { lm, model: 'test-model' }, clock: new VirtualClock() };
}

async function greeted(): Promise<ConversationState> {
  const convo = Conversation.start({ ...setup(new ScriptedLanguageModel()), initialContext: CONTEXT });
  await convo.open().collect();
  return JSON.parse(JSON.stringify(convo.state)) as ConversationState;
}

describe('Conversation: who owns the state', () => {
  it('adopt() carries on from the object it is given, and release() hands that same object back', async () => {
    const stored = await greeted();
    const lm = new ScriptedLanguageModel().on({ user: 'hello' }, { text: 'Hi there.' });
    const convo = Conversation.adopt(stored, setup(lm));
    await convo.send('hello').collect();
    expect(stored.messages.map((m) => m.text).slice(-2)).toEqual(['hello', 'Hi there.']);
    expect(convo.release()).toBe(stored);
  });

  it('resume() still works on a copy: the stored object is left as it was', async () => {
    const stored = await greeted();
    const before = structuredClone(stored);
    const convo = Conversation.resume(stored, setup(new ScriptedLanguageModel().on({ user: 'hello' }, { text: 'Hi there.' })));
    await convo.send('hello').collect();
    expect(stored).toEqual(before);
    expect(convo.release()).not.toBe(stored);
  });

  it('adopt() refuses what resume() refuses', async () => {
    const stored = await greeted();
    expect(() => Conversation.adopt({ ...stored, node_id: 'gone' }, setup(new ScriptedLanguageModel()))).toThrow("node 'gone' is not in this workflow definition");
    expect(() => Conversation.adopt({ ...stored, version: 2 as unknown as 1 }, setup(new ScriptedLanguageModel()))).toThrow(/version 2/);
  });

  it('a released conversation runs no more turns, and cannot be released while a turn runs', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow: LanguageModel = {
      async *stream(): AsyncIterable<LanguageModelEvent> {
        await gate;
        yield { type: 'text', text: 'Done.' };
        yield { type: 'finish', reason: 'stop' };
      },
      complete: async () => ({ value: {}, text: '{}' }),
    };
    const convo = Conversation.adopt(await greeted(), setup(slow));
    const running = convo.send('hello').collect();
    await new Promise((r) => setImmediate(r));
    expect(() => convo.release()).toThrow(ConflictError);
    release();
    await running;
    const state = convo.release();
    expect(state.messages.at(-1)?.text).toBe('Done.');
    await expect(convo.send('again').collect()).rejects.toMatchObject({ code: 'conversation_released' });
    expect(state.messages.at(-1)?.text).toBe('Done.');
  });

  it('release() stops an extraction an aborted turn left running', async () => {
    const def: WorkflowDefinition = {
      nodes: [
        { id: 's', type: 'startCall', data: { name: 'Start', prompt: 'START', extraction_enabled: true, extraction_variables: [{ name: 'topic', type: 'string', prompt: 'What they want.' }] } },
        { id: 'a', type: 'agentNode', data: { name: 'Ask', prompt: 'ASK' } },
      ],
      edges: [{ id: 'e1', source: 's', target: 'a', data: { label: 'Go A', condition: 'go to a' } }],
    };
    const extractionSignals: AbortSignal[] = [];
    const turn = new AbortController();
    const lm: LanguageModel = {
      async *stream(request: StreamRequest): AsyncIterable<LanguageModelEvent> {
        if (request.tools?.some((t) => t.name === 'go_a')) {
          yield { type: 'tool_call', call: { id: 'c1', name: 'go_a', arguments: '{}' } };
          yield { type: 'finish', reason: 'tool_calls' };
          return;
        }
        turn.abort(); // the caller leaves while the model answers at the new node
        yield { type: 'finish', reason: 'stop' };
      },
      complete: (request) => {
        extractionSignals.push(request.signal!);
        return new Promise((_, reject) => request.signal!.addEventListener('abort', () => reject(request.signal!.reason)));
      },
    };
    const convo = Conversation.start({ graph: WorkflowGraph.fromDefinition(def), model: { lm, model: 'test-model' }, clock: new VirtualClock() });
    await expect(convo.send('hello', { signal: turn.signal }).collect()).rejects.toMatchObject({ name: 'AbortError' });
    expect(extractionSignals.map((s) => s.aborted)).toEqual([false]);
    expect(convo.release().node_id).toBe('a');
    expect(extractionSignals.map((s) => s.aborted)).toEqual([true]);
  });

  it('a model adapter that changes the messages it was sent leaves the history alone', async () => {
    const seen: string[][] = [];
    const meddling: LanguageModel = {
      async *stream(request: StreamRequest): AsyncIterable<LanguageModelEvent> {
        seen.push(request.messages.map((m) => m.content));
        for (const m of request.messages) {
          m.content = 'changed by the adapter';
          if (m.role === 'assistant' && m.toolCalls) for (const c of m.toolCalls) c.name = 'changed';
        }
        if (seen.length === 1) yield { type: 'tool_call', call: { id: 'c1', name: 'not_a_tool', arguments: '{}' } };
        else yield { type: 'text', text: 'Fine.' };
        yield { type: 'finish', reason: 'stop' };
      },
      complete: async () => ({ value: {}, text: '{}' }),
    };
    const stored = await greeted();
    const greeting = stored.history[0].content;
    const convo = Conversation.adopt(stored, setup(meddling));
    await convo.send('hello').collect();
    const state = convo.release();
    expect(seen[1].slice(1, 3)).toEqual([greeting, 'hello']);
    expect(state.history[0].content).toBe(greeting);
    expect(state.history[2]).toMatchObject({ role: 'assistant', toolCalls: [{ id: 'c1', name: 'not_a_tool' }] });
  });
});
