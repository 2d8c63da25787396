import { describe, expect, it } from '@jest/globals';
import { ScriptedLanguageModel, VirtualClock } from '../../test/fakes/scripted-language-model.js';
import { ConflictError, ProviderApiError } from '../errors.js';
import { exampleWorkflowDefinition } from '../workflows/example-definition.js';
import type { WorkflowDefinition } from '../workflows/workflow-definition.js';
import { WorkflowGraph } from '../workflows/workflow-graph.js';
import { Conversation, type ConversationOptions } from './conversation.js';
import type { ConversationEvent, ConversationState } from './conversation-state.js';
import { IDLE_CHECK_IN_INSTRUCTION, IDLE_GOODBYE_INSTRUCTION, MAX_DURATION_GOODBYE_INSTRUCTION } from './endings.js';

const GLOBAL_PROMPT = exampleWorkflowDefinition.nodes.find((n) => n.id === 'global')!.data.prompt;
const CONTEXT = { first_name: 'Dana', appointment_time: 'Tuesday at 3pm' };

function dental(): WorkflowGraph {
  return WorkflowGraph.fromDefinition(structuredClone(exampleWorkflowDefinition));
}

function setup(lm: ScriptedLanguageModel, clock = new VirtualClock(), graph = dental()): ConversationOptions & { clock: VirtualClock } {
  return { graph, model: { lm, model: 'test-model', temperature: 0.2 }, clock };
}

/** Event types, each run of deltas written once as `delta*`. */
function types(events: ConversationEvent[]): string[] {
  const out: string[] = [];
  for (const e of events) {
    if (e.type === 'delta' && out.at(-1) === 'delta*') continue;
    out.push(e.type === 'delta' ? 'delta*' : e.type);
  }
  return out;
}

function texts(state: ConversationState): string[] {
  return state.messages.map((m) => `${m.role}@${m.node_id}: ${m.text}`);
}

/** start → a (extracts `topic`) → end, no globalNode, no greeting. */
function smallGraph(extra: Partial<WorkflowDefinition> = {}): WorkflowGraph {
  const def: WorkflowDefinition = {
    nodes: [
      { id: 's', type: 'startCall', data: { name: 'Start', prompt: 'START PROMPT for {{name | friend}}' } },
      {
        id: 'a',
        type: 'agentNode',
        data: {
          name: 'Ask',
          prompt: 'ASK PROMPT; topic so far: {{gathered_context.topic | none}}',
          extraction_enabled: true,
          extraction_variables: [{ name: 'topic', type: 'string', prompt: 'What they want.' }],
        },
      },
      { id: 'b', type: 'agentNode', data: { name: 'Other', prompt: 'OTHER PROMPT' } },
      { id: 'x', type: 'endCall', data: { name: 'Bye', prompt: 'END PROMPT' } },
    ],
    edges: [
      { id: 'e1', source: 's', target: 'a', data: { label: 'Go A', condition: 'go to a' } },
      { id: 'e2', source: 's', target: 'b', data: { label: 'Go B', condition: 'go to b' } },
      { id: 'e3', source: 'a', target: 'x', data: { label: 'Done', condition: 'finished' } },
      { id: 'e4', source: 'b', target: 'x', data: { label: 'Done', condition: 'finished' } },
    ],
    ...extra,
  };
  return WorkflowGraph.fromDefinition(def);
}

/** The dental agent's model script: the caller is Dana and will attend. */
function dentalScript(lm = new ScriptedLanguageModel()): ScriptedLanguageModel {
  return lm
    .on({ system: 'make sure you are speaking with', user: /this is Dana/ }, { text: 'Thank you, Dana.', toolCalls: [{ name: 'identity_confirmed' }] })
    .on({ system: 'Remind Dana', user: /this is Dana/ }, { text: 'Your cleaning is on Tuesday at 3pm. Can you still make it?', usage: { promptTokens: 50, completionTokens: 12 } })
    .on({ system: 'Remind Dana', user: /be there/ }, { toolCalls: [{ name: 'will_attend' }], usage: { promptTokens: 60, completionTokens: 3 } })
    .on({ system: 'arrive ten minutes early', noTools: true }, { text: 'Wonderful. Please arrive ten minutes early. Goodbye!', usage: { promptTokens: 40, completionTokens: 9 } })
    .onExtract({ user: 'will_attend (boolean)' }, { value: { will_attend: 'yes' }, usage: { promptTokens: 30, completionTokens: 5 } });
}

describe('Conversation: the dental example from greeting to its endCall node', () => {
  it('greets, confirms, transitions twice, ends with the node disposition and will_attend typed boolean', async () => {
    const lm = dentalScript();
    const convo = Conversation.start({ ...setup(lm), initialContext: CONTEXT });

    const opening = await convo.open().collect();
    expect(opening).toEqual([
      {
        type: 'message',
        message: {
          role: 'assistant',
          text: 'Hi, this is Ava from Brightsmile Dental. Am I speaking with Dana?',
          node_id: 'start',
          created_at: '2026-01-05T09:00:00.000Z',
          ended_at: '2026-01-05T09:00:00.000Z',
        },
      },
    ]);
    expect(lm.requests).toHaveLength(0); // a greeting is said, not generated

    const second = await convo.send('Yes, this is Dana.').collect();
    expect(types(second)).toEqual([
      'message', // user
      'delta*', // "Thank", " you,", " Dana."
      'usage',
      'message', // assistant at start
      'transition',
      'message', // system: moved
      'delta*',
      'usage',
      'message', // assistant at confirm
    ]);
    expect(second.find((e) => e.type === 'transition')).toEqual({
      type: 'transition',
      from: { id: 'start', name: 'Greeting' },
      to: { id: 'confirm', name: 'Confirm appointment' },
      edge_id: 'e_start_confirm',
      tool_name: 'identity_confirmed',
    });
    expect(convo.node).toEqual({ id: 'confirm', name: 'Confirm appointment' });

    const third = await convo.send("Yes, I'll be there.").collect();
    expect(types(third)).toEqual([
      'message',
      'usage', // the tool-call-only response
      'transition',
      'message',
      'delta*',
      'usage',
      'message', // last words
      'usage', // extraction of the confirm node
      'message', // system: extracted
      'extracted',
      'message', // system: ended
      'ended',
    ]);
    expect(third.at(-1)).toEqual({ type: 'ended', reason: 'end_node', disposition: 'appointment_confirmed' });
    expect(third.find((e) => e.type === 'extracted')).toEqual({ type: 'extracted', node_id: 'confirm', values: { will_attend: true } });

    const state = convo.state;
    expect(state.status).toBe('ended');
    expect(state.disposition).toBe('appointment_confirmed');
    expect(state.end_reason).toBe('end_node');
    expect(state.gathered_context).toEqual({ will_attend: true, mapped_call_disposition: 'appointment_confirmed' });
    expect(typeof state.gathered_context.will_attend).toBe('boolean');
    expect(state.node_path).toEqual(['start', 'confirm', 'end_confirmed']);
    expect(texts(state)).toEqual([
      'assistant@start: Hi, this is Ava from Brightsmile Dental. Am I speaking with Dana?',
      'user@start: Yes, this is Dana.',
      'assistant@start: Thank you, Dana.',
      "system@confirm: Moved from 'Greeting' to 'Confirm appointment' (Identity confirmed).",
      'assistant@confirm: Your cleaning is on Tuesday at 3pm. Can you still make it?',
      "user@confirm: Yes, I'll be there.",
      "system@end_confirmed: Moved from 'Confirm appointment' to 'Confirmed' (Will attend).",
      'assistant@end_confirmed: Wonderful. Please arrive ten minutes early. Goodbye!',
      "system@confirm: Extracted at 'Confirm appointment': will_attend = true.",
      'system@end_confirmed: The conversation ended (end node); disposition: appointment_confirmed.',
    ]);
    expect(state.log.map((l) => [l.type, l.node_id])).toEqual([
      ['node_entered', 'start'],
      ['node_entered', 'confirm'],
      ['node_entered', 'end_confirmed'],
      ['variables_extracted', 'confirm'],
    ]);
    // Usage: the first answer's estimated count, then the pinned ones, extraction included.
    const first = lm.streamRequests[0];
    const firstUsage = { p: Math.ceil(first.messages.reduce((n, m) => n + m.content.length, 0) / 4), c: 4 };
    expect(state.usage).toEqual({ prompt_tokens: firstUsage.p + 50 + 60 + 40 + 30, completion_tokens: firstUsage.c + 12 + 3 + 9 + 5 });

    // Each node's system prompt and tools.
    const renderedStart =
      'Greet the caller and make sure you are speaking with Dana. Once they confirm who they are, say you are calling about their appointment.';
    expect(lm.streamRequests.map((r) => [r.system, r.tools])).toEqual([
      [`${GLOBAL_PROMPT}\n\n${renderedStart}`, ['identity_confirmed', 'wrong_person']],
      [
        `${GLOBAL_PROMPT}\n\nRemind Dana of the cleaning appointment on Tuesday at 3pm and ask whether they can still make it.`,
        ['will_attend', 'needs_another_time'],
      ],
      [
        `${GLOBAL_PROMPT}\n\nRemind Dana of the cleaning appointment on Tuesday at 3pm and ask whether they can still make it.`,
        ['will_attend', 'needs_another_time'],
      ],
      // endCall nodes have no add_global_prompt: their own prompt only, and no tools.
      ['Thank the caller, remind them to arrive ten minutes early, and say goodbye.', []],
    ]);
    expect(lm.streamRequests[0].toolDescriptions).toEqual({
      identity_confirmed: 'The caller confirms they are Dana.',
      wrong_person: 'The caller says they are not Dana or do not know them.',
    });
    expect(lm.streamRequests.every((r) => r.model === 'test-model' && r.temperature === 0.2)).toBe(true);
    expect(lm.requests.every((r) => r.hasSignal)).toBe(true); // every model call can be aborted
    // The extraction call asked for will_attend by JSON schema and read the conversation.
    expect(lm.completeRequests).toHaveLength(1);
    expect(lm.completeRequests[0].schema).toMatchObject({ properties: { will_attend: { type: ['boolean', 'null'] } } });
    expect(lm.completeRequests[0].lastUser).toContain("user: Yes, I'll be there.");
  });

  it('after a transition, the model answers in the same turn with the tool result in its history', async () => {
    const lm = dentalScript();
    const convo = Conversation.start({ ...setup(lm), initialContext: CONTEXT });
    await convo.open().collect();
    await convo.send('Yes, this is Dana.').collect();
    const followUp = lm.streamRequests[1];
    expect(followUp.messages.slice(1)).toEqual([
      { role: 'assistant', content: 'Hi, this is Ava from Brightsmile Dental. Am I speaking with Dana?' },
      { role: 'user', content: 'Yes, this is Dana.' },
      { role: 'assistant', content: 'Thank you, Dana.', toolCalls: [{ id: 'call_1', name: 'identity_confirmed', arguments: '{}' }] },
      { role: 'tool', toolCallId: 'call_1', content: '{"status":"done"}' },
    ]);
  });
});

describe('Conversation: opening', () => {
  it('without a greeting the model speaks first, under the start node', async () => {
    const lm = new ScriptedLanguageModel().on({ system: 'START PROMPT for Sam' }, { text: 'Hello Sam, how can I help?' });
    const convo = Conversation.start({ ...setup(lm, new VirtualClock(), smallGraph()), initialContext: { name: 'Sam' } });
    const events = await convo.open().collect();
    expect(types(events)).toEqual(['delta*', 'usage', 'message']);
    expect(events.filter((e) => e.type === 'delta').map((e) => (e.type === 'delta' ? e.text : ''))).toEqual(['Hello', ' Sam,', ' how', ' can', ' I', ' help?']);
    expect(convo.state.messages.map((m) => m.text)).toEqual(['Hello Sam, how can I help?']);
    expect(lm.streamRequests[0].messages).toEqual([{ role: 'system', content: 'START PROMPT for Sam' }]);
    expect(lm.streamRequests[0].tools).toEqual(['go_a', 'go_b']);
  });

  it('honours a greeting_override from the initial context', async () => {
    const convo = Conversation.start({
      ...setup(new ScriptedLanguageModel()),
      initialContext: { ...CONTEXT, greeting_override: 'Hello {{first_name}}, quick call from the clinic.' },
    });
    await convo.open().collect();
    expect(convo.state.messages[0].text).toBe('Hello Dana, quick call from the clinic.');
  });
});

describe('Conversation: text streams as it arrives', () => {
  it('each delta reaches the consumer before the model produces the next word', async () => {
    const inner = new ScriptedLanguageModel().on({}, { text: 'one two three' });
    let produced = 0;
    const counting = {
      async *stream(request: Parameters<ScriptedLanguageModel['stream']>[0]) {
        for await (const event of inner.stream(request)) {
          if (event.type === 'text') produced += 1;
          yield event;
        }
      },
      complete: inner.complete.bind(inner),
    };
    const clock = new VirtualClock();
    const convo = Conversation.start({ graph: smallGraph(), model: { lm: counting, model: 'm' }, clock });
    const seen: number[] = [];
    for await (const event of convo.send('hi')) if (event.type === 'delta') seen.push(produced);
    expect(seen).toEqual([1, 2, 3]);
  });

  it('stamps an assistant line with when its first word came and when it finished (word delays on virtual time)', async () => {
    const clock = new VirtualClock('2026-01-05T09:00:00.000Z');
    const lm = new ScriptedLanguageModel({ sleep: clock.sleep }).on({}, { text: 'a b c', firstDelayMs: 300, wordDelayMs: 100 });
    const convo = Conversation.start({ ...setup(lm, clock, smallGraph()) });
    await convo.send('hi').collect();
    const reply = convo.state.messages[1];
    expect([reply.created_at, reply.ended_at]).toEqual(['2026-01-05T09:00:00.300Z', '2026-01-05T09:00:00.500Z']);
  });
});

describe('Conversation: tool calls', () => {
  it('two transitions in one response: the first is taken, the second answered as ignored', async () => {
    const lm = new ScriptedLanguageModel()
      .on({ system: 'START PROMPT' }, { toolCalls: [{ name: 'go_a', id: 't1' }, { name: 'go_b', id: 't2' }] })
      .on({ system: 'ASK PROMPT' }, { text: 'What is it about?' });
    const convo = Conversation.start(setup(lm, new VirtualClock(), smallGraph()));
    const events = await convo.send('hello').collect();
    expect(events.filter((e) => e.type === 'transition')).toHaveLength(1);
    expect(convo.node.id).toBe('a');
    expect(convo.state.node_path).toEqual(['s', 'a']);
    expect(lm.streamRequests[1].messages.slice(-3)).toEqual([
      {
        role: 'assistant',
        content: '',
        toolCalls: [
          { id: 't1', name: 'go_a', arguments: '{}' },
          { id: 't2', name: 'go_b', arguments: '{}' },
        ],
      },
      { role: 'tool', toolCallId: 't1', content: '{"status":"done"}' },
      {
        role: 'tool',
        toolCallId: 't2',
        content: JSON.stringify({ status: 'ignored', reason: "only one transition per response; already moving to 'Ask'" }),
      },
    ]);
  });

  it('a transition and another tool in one response: every call is answered before the node changes', async () => {
    const lm = new ScriptedLanguageModel()
      .on({ system: 'START PROMPT' }, { text: 'Sure.', toolCalls: [{ name: 'lookup_weather', id: 'w' }, { name: 'go_b', id: 'g' }] })
      .on({ system: 'OTHER PROMPT' }, { text: 'Here we are.' });
    const convo = Conversation.start(setup(lm, new VirtualClock(), smallGraph()));
    await convo.send('hello').collect();
    const [first, second] = lm.streamRequests;
    expect(first.tools).toEqual(['go_a', 'go_b']);
    expect(second.system).toBe('OTHER PROMPT');
    expect(second.tools).toEqual(['done']);
    expect(second.messages.slice(-2)).toEqual([
      { role: 'tool', toolCallId: 'w', content: JSON.stringify({ status: 'error', error: "unknown tool 'lookup_weather'" }) },
      { role: 'tool', toolCallId: 'g', content: '{"status":"done"}' },
    ]);
    expect(convo.node.id).toBe('b');
  });

  it('a response of unknown tools only: the model answers again under the same node', async () => {
    const lm = new ScriptedLanguageModel()
      .on({ system: 'START PROMPT' }, { toolCalls: [{ name: 'nope', id: 'n' }] }, 1)
      .on({ system: 'START PROMPT' }, { text: 'Sorry, how can I help?' });
    const convo = Conversation.start(setup(lm, new VirtualClock(), smallGraph()));
    await convo.send('hello').collect();
    expect(lm.streamRequests.map((r) => r.system)).toEqual(['START PROMPT for friend', 'START PROMPT for friend']);
    expect(convo.state.messages.at(-1)?.text).toBe('Sorry, how can I help?');
  });

  it('stops after maxModelCallsPerTurn model calls in one turn', async () => {
    const lm = new ScriptedLanguageModel().on({}, { toolCalls: [{ name: 'nope' }] });
    const convo = Conversation.start({ ...setup(lm, new VirtualClock(), smallGraph()), maxModelCallsPerTurn: 3 });
    await convo.send('hello').collect();
    expect(lm.streamRequests).toHaveLength(3);
    expect(convo.status).toBe('active');
  });
});

describe('Conversation: extraction', () => {
  it('re-renders prompts at node entry with values extracted earlier', async () => {
    const lm = new ScriptedLanguageModel()
      .on({ system: 'START PROMPT' }, { toolCalls: [{ name: 'go_a' }] })
      .on({ system: 'ASK PROMPT', user: 'billing' }, { toolCalls: [{ name: 'done' }] })
      .on({ system: 'ASK PROMPT' }, { text: 'What about?' })
      .on({ system: 'END PROMPT' }, { text: 'Bye.' })
      .onExtract({}, { value: { topic: 'billing' } });
    const convo = Conversation.start(setup(lm, new VirtualClock(), smallGraph()));
    await convo.send('hi').collect();
    expect(lm.streamRequests[1].system).toBe('ASK PROMPT; topic so far: none');
    await convo.send('billing please').collect();
    expect(convo.state.gathered_context).toEqual({ topic: 'billing', mapped_call_disposition: 'completed' });
    expect(convo.state.disposition).toBe('completed'); // the endCall node has no disposition
  });

  it('an extraction failure becomes a system note and never breaks the turn', async () => {
    const lm = new ScriptedLanguageModel()
      .on({ system: 'START PROMPT' }, { toolCalls: [{ name: 'go_a' }] })
      .on({ system: 'ASK PROMPT', user: 'done' }, { toolCalls: [{ name: 'done' }] })
      .on({ system: 'ASK PROMPT' }, { text: 'What about?' })
      .on({ system: 'END PROMPT' }, { text: 'Bye.' })
      .onExtract({}, { error: new ProviderApiError('openai', 'The model is overloaded', true) });
    const convo = Conversation.start(setup(lm, new VirtualClock(), smallGraph()));
    await convo.send('hi').collect();
    const events = await convo.send('done').collect();
    expect(events.at(-1)).toMatchObject({ type: 'ended', reason: 'end_node' });
    expect(texts(convo.state)).toContain("system@a: Extraction at 'Ask' failed: The model is overloaded");
    expect(convo.state.gathered_context).toEqual({ mapped_call_disposition: 'completed' });
  });

  it('an endCall node with extraction enabled runs its own extraction before the end', async () => {
    const def = structuredClone(exampleWorkflowDefinition);
    const end = def.nodes.find((n) => n.id === 'end_wrong_person')!;
    end.data.extraction_enabled = true;
    end.data.extraction_variables = [{ name: 'knows_dana', type: 'boolean', prompt: 'Whether they know Dana.' }];
    const lm = new ScriptedLanguageModel()
      .on({ system: 'make sure' }, { toolCalls: [{ name: 'wrong_person' }] })
      .on({ system: 'Apologize for the mix-up' }, { text: 'Sorry for the mix-up, goodbye.' })
      .onExtract({ user: 'knows_dana' }, { value: { knows_dana: 'no' } });
    const convo = Conversation.start({ ...setup(lm, new VirtualClock(), WorkflowGraph.fromDefinition(def)), initialContext: CONTEXT });
    await convo.open().collect();
    const events = await convo.send('Wrong number, I do not know any Dana.').collect();
    expect(events.at(-1)).toEqual({ type: 'ended', reason: 'end_node', disposition: 'wrong_number' });
    expect(convo.state.gathered_context).toEqual({ knows_dana: false, mapped_call_disposition: 'wrong_number' });
    expect(lm.completeRequests[0].lastUser).toContain('assistant: Sorry for the mix-up, goodbye.');
  });

  it('uses the extraction model when one is given', async () => {
    const main = new ScriptedLanguageModel()
      .on({ system: 'START PROMPT' }, { toolCalls: [{ name: 'go_a' }] })
      .on({ system: 'ASK PROMPT' }, { text: 'ok' });
    const cheap = new ScriptedLanguageModel().onExtract({}, { value: { topic: 'x' } });
    const convo = Conversation.start({
      ...setup(main, new VirtualClock(), smallGraph()),
      extractionModel: { lm: cheap, model: 'cheap-model' },
    });
    await convo.send('hi').collect();
    await convo.hangUp().collect();
    expect(main.completeRequests).toHaveLength(0);
    expect(cheap.completeRequests.map((r) => r.model)).toEqual(['cheap-model']);
    expect(convo.state.gathered_context.topic).toBe('x');
  });
});

describe('Conversation: endings driven from outside', () => {
  it('userIdle: the first silence checks in with tools still offered, the second says goodbye and ends user_idle', async () => {
    const lm = new ScriptedLanguageModel()
      .on({ user: IDLE_CHECK_IN_INSTRUCTION }, { text: 'Are you still there?' })
      .on({ user: IDLE_GOODBYE_INSTRUCTION, noTools: true }, { text: 'Goodbye!' })
      .on({ user: 'yes' }, { text: 'Great.' });
    const convo = Conversation.start(setup(lm, new VirtualClock(), smallGraph()));
    await convo.userIdle().collect();
    expect(lm.streamRequests[0].tools).toEqual(['go_a', 'go_b']);
    await convo.send('yes I am here').collect(); // speech resets the count
    await convo.userIdle().collect();
    expect(convo.status).toBe('active');
    const events = await convo.userIdle().collect();
    expect(events.at(-1)).toEqual({ type: 'ended', reason: 'user_idle', disposition: 'user_idle' });
    expect(convo.state.messages.filter((m) => m.role === 'assistant').map((m) => m.text)).toEqual([
      'Are you still there?',
      'Great.',
      'Are you still there?',
      'Goodbye!',
    ]);
    expect(convo.state.gathered_context.mapped_call_disposition).toBe('user_idle');
  });

  it('maxDurationReached ends max_duration, with no model call unless a goodbye is asked for', async () => {
    const lm = new ScriptedLanguageModel().on({ user: MAX_DURATION_GOODBYE_INSTRUCTION, noTools: true }, { text: 'Sorry, out of time. Bye.' });
    const quiet = Conversation.start(setup(lm, new VirtualClock(), smallGraph()));
    expect((await quiet.maxDurationReached().collect()).at(-1)).toEqual({ type: 'ended', reason: 'max_duration', disposition: 'max_duration' });
    expect(lm.requests).toHaveLength(0);

    const polite = Conversation.start(setup(lm, new VirtualClock(), smallGraph()));
    await polite.maxDurationReached({ goodbye: true }).collect();
    expect(polite.state.messages.map((m) => m.text)).toEqual([
      'Sorry, out of time. Bye.',
      'The conversation ended (max duration); disposition: max_duration.',
    ]);
  });

  it('hangUp ends completed, or with the call_disposition an extraction set; later endings change nothing', async () => {
    const lm = new ScriptedLanguageModel();
    const plain = Conversation.start(setup(lm, new VirtualClock(), smallGraph()));
    expect((await plain.hangUp().collect()).at(-1)).toEqual({ type: 'ended', reason: 'hang_up', disposition: 'completed' });
    expect(await plain.hangUp().collect()).toEqual([]);
    expect(await plain.userIdle().collect()).toEqual([]);
    await expect(plain.send('hello?').collect()).rejects.toMatchObject({ code: 'conversation_ended' });

    const def = structuredClone(exampleWorkflowDefinition);
    def.nodes.find((n) => n.id === 'start')!.data.extraction_enabled = true;
    def.nodes.find((n) => n.id === 'start')!.data.extraction_variables = [
      { name: 'call_disposition', type: 'string', prompt: 'callback_requested when they ask to be called later' },
    ];
    const lm2 = new ScriptedLanguageModel().onExtract({}, { value: { call_disposition: 'callback_requested' } });
    const tagged = Conversation.start({ ...setup(lm2, new VirtualClock(), WorkflowGraph.fromDefinition(def)), initialContext: CONTEXT });
    await tagged.open().collect();
    expect((await tagged.hangUp().collect()).at(-1)).toEqual({ type: 'ended', reason: 'hang_up', disposition: 'callback_requested' });
  });

  it('hangUp during an endCall node keeps the node disposition', async () => {
    const clock = new VirtualClock();
    const lm = new ScriptedLanguageModel({ sleep: clock.sleep })
      .on({ system: 'START PROMPT' }, { toolCalls: [{ name: 'go_b' }] })
      .on({ system: 'OTHER PROMPT' }, { toolCalls: [{ name: 'done' }] })
      .on({ system: 'END PROMPT' }, { text: 'Good bye now', wordDelayMs: 10 });
    const def = smallGraph().definition;
    def.nodes.find((n) => n.id === 'x')!.data.disposition = 'finished_ok';
    const convo = Conversation.start(setup(lm, clock, WorkflowGraph.fromDefinition(def)));
    const turn = convo.send('hi')[Symbol.asyncIterator]();
    for (;;) {
      const next = await turn.next();
      if (next.value?.type === 'delta' && next.value.node_id === 'x') break;
    }
    const ended = await convo.hangUp().collect();
    await expect(turn.next()).rejects.toMatchObject({ name: 'AbortError' });
    expect(ended.at(-1)).toEqual({ type: 'ended', reason: 'hang_up', disposition: 'finished_ok' });
    expect(convo.state.messages.find((m) => m.interrupted)).toMatchObject({ role: 'assistant', text: 'Good', node_id: 'x' });
  });
});

describe('Conversation: barge-in and DTMF', () => {
  it('agentInterrupted cuts the last assistant line to what was heard, in the transcript and the model history', async () => {
    const lm = new ScriptedLanguageModel()
      .on({ user: 'hi' }, { text: 'Let me tell you all about our many wonderful offers today.' })
      .on({ user: 'stop' }, { text: 'Sorry!' });
    const convo = Conversation.start(setup(lm, new VirtualClock(), smallGraph()));
    await convo.send('hi').collect();
    convo.agentInterrupted('Let me tell you all');
    expect(convo.state.messages.at(-1)).toMatchObject({ role: 'assistant', text: 'Let me tell you all', interrupted: true });
    await convo.send('stop').collect();
    expect(lm.streamRequests[1].messages.slice(1, 3)).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'Let me tell you all' },
    ]);
    convo.agentInterrupted('');
    expect(convo.state.messages.map((m) => m.text)).toEqual(['hi', 'Let me tell you all', 'stop']);
    expect(convo.state.history.map((m) => m.content)).toEqual(['hi', 'Let me tell you all', 'stop']);
  });

  it('agentResumed continues the cut line with what was heard of the rest (or adds it when nothing was heard before the cut)', async () => {
    const lm = new ScriptedLanguageModel()
      .on({ user: 'hi' }, { text: 'Let me tell you all about our offers.' })
      .on({ user: 'next' }, { text: 'Here is another line.' });
    const convo = Conversation.start(setup(lm, new VirtualClock(), smallGraph()));
    await convo.send('hi').collect();
    convo.agentInterrupted('Let me tell');
    convo.agentResumed('Let me tell', 'you all about', true); // the rest was cut again
    expect(convo.state.messages.at(-1)).toMatchObject({ role: 'assistant', text: 'Let me tell you all about', interrupted: true });
    convo.agentResumed('Let me tell you all about', 'our offers.', false);
    expect(convo.state.messages.at(-1)).toEqual(expect.objectContaining({ text: 'Let me tell you all about our offers.' }));
    expect(convo.state.messages.at(-1)!.interrupted).toBeUndefined();
    expect(convo.state.history.map((m) => m.content)).toEqual(['hi', 'Let me tell you all about our offers.']);
    convo.agentResumed('Let me tell you all about our offers.', '', false); // nothing heard: nothing changes
    await convo.send('next').collect();
    convo.agentInterrupted('');
    convo.agentResumed('', 'Here is another line.', false);
    expect(convo.state.messages.map((m) => m.text)).toEqual(['hi', 'Let me tell you all about our offers.', 'next', 'Here is another line.']);
    expect(convo.state.history.map((m) => m.content)).toEqual(['hi', 'Let me tell you all about our offers.', 'next', 'Here is another line.']);
  });

  /** Runs `turn` in the background, collecting its events, and hands each one to `onEvent` as it comes. */
  function drive(turn: AsyncIterable<ConversationEvent>, onEvent: (e: ConversationEvent) => void = () => {}) {
    const events: ConversationEvent[] = [];
    const done = (async () => {
      for await (const e of turn) {
        events.push(e);
        onEvent(e);
      }
    })();
    done.catch(() => {});
    return { events, done };
  }
  const settleTasks = async () => {
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  };

  it('holdTurn: the model call streams on but nothing is committed until releaseTurn; then the turn goes on as if never cut', async () => {
    const script = () =>
      new ScriptedLanguageModel({ sleep: new VirtualClock().sleep })
        .on({ system: 'START PROMPT' }, { text: 'Sure, let me move you along now.', wordDelayMs: 10, toolCalls: [{ name: 'go_a' }], usage: { promptTokens: 10, completionTokens: 8 } })
        .on({ system: 'ASK PROMPT' }, { text: 'What is it about?' })
        .onExtract({}, { value: { topic: 'x' } });
    const plain = Conversation.start(setup(script(), undefined, smallGraph()));
    const expected = await plain.send('hi').collect();

    const lm = script();
    const convo = Conversation.start(setup(lm, undefined, smallGraph()));
    let held = false;
    const run = drive(convo.send('hi'), (e) => {
      if (e.type === 'delta' && !held) held = convo.holdTurn();
    });
    await settleTasks();
    // the whole response streamed (and its tokens were counted), but none of it is committed or acted on
    expect(held).toBe(true);
    expect(convo.held).toBe(true);
    expect(run.events.filter((e) => e.type === 'delta').map((e) => (e as { text: string }).text).join('')).toBe('Sure, let me move you along now.');
    expect(types(run.events)).toEqual(['message', 'delta*', 'usage']);
    expect(convo.state.usage).toEqual({ prompt_tokens: 10, completion_tokens: 8 });
    expect(convo.node.id).toBe('s');
    expect(convo.state.history.map((m) => m.role)).toEqual(['user']);
    expect(lm.streamRequests).toHaveLength(1);
    convo.releaseTurn();
    await run.done;
    expect(convo.held).toBe(false);
    expect(types(run.events)).toEqual(types(expected));
    expect(convo.state.history).toEqual(plain.state.history);
    expect(texts(convo.state)).toEqual(texts(plain.state));
    expect(convo.node.id).toBe('a');
  });

  it('a held turn ended by agentInterrupted keeps only the heard words: its tool call, transition and the rest never happen', async () => {
    const lm = new ScriptedLanguageModel({ sleep: new VirtualClock().sleep })
      .on({ system: 'START PROMPT', user: 'wait' }, { text: 'Of course.' })
      .on({ system: 'START PROMPT' }, { text: 'Sure, let me move you along now.', wordDelayMs: 10, toolCalls: [{ name: 'go_a' }], usage: { promptTokens: 10, completionTokens: 8 } });
    const convo = Conversation.start(setup(lm, undefined, smallGraph()));
    const run = drive(convo.send('hi'), (e) => {
      if (e.type === 'delta' && !convo.held) convo.holdTurn();
    });
    await settleTasks();
    convo.agentInterrupted('Sure,');
    await expect(run.done).rejects.toMatchObject({ name: 'AbortError' });
    expect(convo.node.id).toBe('s');
    expect(convo.state.history).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'Sure,' },
    ]);
    expect(convo.state.messages.at(-1)).toMatchObject({ role: 'assistant', text: 'Sure,', interrupted: true });
    expect(convo.state.usage).toEqual({ prompt_tokens: 10, completion_tokens: 8 }); // spent all the same
    expect(convo.state.log.map((l) => l.type)).toEqual(['node_entered']);
    await convo.send('wait').collect();
    expect(lm.streamRequests.at(-1)!.messages.map((m) => m.content).slice(1)).toEqual(['hi', 'Sure,', 'wait']);
  });

  it('an endCall node\'s ending waits for the judgement too: released it ends, interrupted it does not', async () => {
    const script = () =>
      new ScriptedLanguageModel({ sleep: new VirtualClock().sleep })
        .on({ system: 'START PROMPT' }, { toolCalls: [{ name: 'go_b' }] })
        .on({ system: 'OTHER PROMPT' }, { toolCalls: [{ name: 'done' }] })
        .on({ system: 'END PROMPT' }, { text: 'Good bye now', wordDelayMs: 10 });
    for (const judged of ['false', 'real'] as const) {
      const convo = Conversation.start(setup(script(), undefined, smallGraph()));
      const run = drive(convo.send('hi'), (e) => {
        if (e.type === 'delta' && e.node_id === 'x' && !convo.held) convo.holdTurn();
      });
      await settleTasks();
      expect(convo.status).toBe('active');
      expect(run.events.some((e) => e.type === 'ended')).toBe(false);
      if (judged === 'false') {
        convo.releaseTurn();
        await run.done;
        expect(run.events.at(-1)).toEqual({ type: 'ended', reason: 'end_node', disposition: 'completed' });
        expect(convo.state.messages.filter((m) => m.role === 'assistant').at(-1)).toMatchObject({ text: 'Good bye now' });
      } else {
        convo.agentInterrupted('Good');
        await expect(run.done).rejects.toMatchObject({ name: 'AbortError' });
        expect(convo.status).toBe('active');
        expect(convo.state.history.at(-1)).toEqual({ role: 'assistant', content: 'Good' });
      }
    }
  });

  it('holdTurn with no turn running holds nothing', () => {
    const convo = Conversation.start(setup(new ScriptedLanguageModel()));
    expect(convo.holdTurn()).toBe(false);
    expect(convo.held).toBe(false);
    convo.releaseTurn();
  });

  it('DTMF digits reach the model as user text', async () => {
    const lm = new ScriptedLanguageModel().on({ user: '[DTMF 5]' }, { text: 'You pressed five.' });
    const convo = Conversation.start(setup(lm, new VirtualClock(), smallGraph()));
    await convo.send('[DTMF 5]').collect();
    expect(lm.streamRequests[0].lastUser).toBe('[DTMF 5]');
  });
});

describe('Conversation: resume from a stored state', () => {
  it('a JSON round trip mid-conversation carries on to the end with the same history, node and usage', async () => {
    const lm = dentalScript();
    const first = Conversation.start({ ...setup(lm), initialContext: CONTEXT });
    await first.open().collect();
    await first.send('Yes, this is Dana.').collect();
    const stored = JSON.parse(JSON.stringify(first.state)) as ConversationState;
    expect(stored.node_id).toBe('confirm');

    const lm2 = dentalScript();
    const resumed = Conversation.resume(stored, setup(lm2));
    expect(resumed.node).toEqual({ id: 'confirm', name: 'Confirm appointment' });
    await resumed.send("Yes, I'll be there.").collect();
    expect(lm2.streamRequests[0].messages.slice(1)).toEqual([...stored.history, { role: 'user', content: "Yes, I'll be there." }]);
    const state = resumed.state;
    expect(state.status).toBe('ended');
    expect(state.node_path).toEqual(['start', 'confirm', 'end_confirmed']);
    expect(state.gathered_context.will_attend).toBe(true);
    expect(state.usage.prompt_tokens).toBeGreaterThan(stored.usage.prompt_tokens);
    // the original conversation object is untouched by the resumed one
    expect(first.state).toEqual(stored);
  });

  it('refuses a state naming a node the definition no longer has, or another version', () => {
    const convo = Conversation.start(setup(new ScriptedLanguageModel(), new VirtualClock(), smallGraph()));
    const state = convo.state;
    expect(() => Conversation.resume({ ...state, node_id: 'gone' }, setup(new ScriptedLanguageModel(), new VirtualClock(), smallGraph()))).toThrow(
      "node 'gone' is not in this workflow definition",
    );
    expect(() =>
      Conversation.resume({ ...state, version: 2 as unknown as 1 }, setup(new ScriptedLanguageModel(), new VirtualClock(), smallGraph())),
    ).toThrow(/version 2/);
  });
});

describe('Conversation: aborts, failures and concurrency', () => {
  it('abort() stops a streaming turn: AbortError from the iterator, streamed text kept as interrupted, the next turn runs', async () => {
    const lm = new ScriptedLanguageModel()
      .on({ user: 'long' }, { text: 'This is a very long answer', toolCalls: [{ name: 'go_a' }] })
      .on({ user: 'again' }, { text: 'Short.' });
    const convo = Conversation.start(setup(lm, new VirtualClock(), smallGraph()));
    const it = convo.send('long')[Symbol.asyncIterator]();
    expect((await it.next()).value).toMatchObject({ type: 'message' });
    expect((await it.next()).value).toEqual({ type: 'delta', text: 'This', node_id: 's' });
    expect((await it.next()).value).toEqual({ type: 'delta', text: ' is', node_id: 's' });
    convo.abort();
    expect(convo.busy).toBe(false);
    await expect(it.next()).rejects.toMatchObject({ name: 'AbortError' });
    expect(convo.node.id).toBe('s'); // the tool call never came: no transition
    expect(convo.state.messages.at(-1)).toMatchObject({ role: 'assistant', text: 'This is', interrupted: true });
    await convo.send('again').collect();
    expect(convo.state.messages.at(-1)?.text).toBe('Short.');
  });

  it('an external AbortSignal aborts the in-flight model request promptly (real timers)', async () => {
    const lm = new ScriptedLanguageModel().on({}, { text: 'slow words here', wordDelayMs: 5_000 });
    const convo = Conversation.start(setup(lm, new VirtualClock(), smallGraph()));
    const controller = new AbortController();
    const started = Date.now();
    const events: ConversationEvent[] = [];
    const run = (async () => {
      for await (const e of convo.send('hi', { signal: controller.signal })) {
        events.push(e);
        if (e.type === 'delta') controller.abort();
      }
    })();
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(events.map((e) => e.type)).toEqual(['message', 'delta']);
    expect(convo.state.messages.at(-1)).toMatchObject({ text: 'slow', interrupted: true });
  });

  it('a model failure propagates from the turn; the user line is kept and retry() answers it', async () => {
    const lm = new ScriptedLanguageModel()
      .on({}, { text: 'Half an answ', error: new ProviderApiError('openai', 'upstream 503', true), failAfterWords: 2 }, 1)
      .on({}, { text: 'A whole answer.' });
    const convo = Conversation.start(setup(lm, new VirtualClock(), smallGraph()));
    await expect(convo.send('question').collect()).rejects.toBeInstanceOf(ProviderApiError);
    expect(convo.busy).toBe(false);
    expect(texts(convo.state)).toEqual(['user@s: question']);
    expect(convo.state.awaiting_reply).toBe(true);
    expect(convo.state.history).toEqual([{ role: 'user', content: 'question' }]);
    await convo.retry().collect();
    expect(texts(convo.state)).toEqual(['user@s: question', 'assistant@s: A whole answer.']);
    expect(convo.state.awaiting_reply).toBe(false);
  });

  it('one turn at a time: a second turn while one runs is refused with conversation_busy', async () => {
    const lm = new ScriptedLanguageModel().on({}, { text: 'one two' });
    const convo = Conversation.start(setup(lm, new VirtualClock(), smallGraph()));
    const it = convo.send('a')[Symbol.asyncIterator]();
    await it.next();
    const refused = convo.send('b').collect();
    await expect(refused).rejects.toBeInstanceOf(ConflictError);
    await expect(refused).rejects.toMatchObject({ code: 'conversation_busy' });
    while (!(await it.next()).done);
    await convo.send('c').collect();
    expect(convo.state.messages.filter((m) => m.role === 'user').map((m) => m.text)).toEqual(['a', 'c']);
  });

  it('a consumer that stops early (a client gone) aborts the turn and frees the conversation', async () => {
    const lm = new ScriptedLanguageModel().on({}, { text: 'one two three' });
    const convo = Conversation.start(setup(lm, new VirtualClock(), smallGraph()));
    for await (const e of convo.send('a')) if (e.type === 'delta') break;
    expect(convo.busy).toBe(false);
    expect(convo.state.messages.at(-1)).toMatchObject({ text: 'one', interrupted: true });
  });

  it('a turn object runs once', async () => {
    const convo = Conversation.start(setup(new ScriptedLanguageModel(), new VirtualClock(), smallGraph()));
    const turn = convo.hangUp();
    await turn.collect();
    expect(() => turn[Symbol.asyncIterator]()).toThrow('a conversation turn runs once');
  });
});

describe('Conversation: extraction runs beside the reply', () => {
  function gated(): { lm: ScriptedLanguageModel & { release(): void; started: number }; def: WorkflowDefinition } {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const lm = new ScriptedLanguageModel()
      .on({ system: 'START PROMPT' }, { toolCalls: [{ name: 'go_b' }] })
      .on({ system: 'OTHER PROMPT' }, { text: 'Here is the other node.' })
      .onExtract({}, { value: { topic: 'billing' } });
    const complete = lm.complete.bind(lm);
    const counted = Object.assign(lm, { release: () => release(), started: 0 });
    lm.complete = async (request) => {
      counted.started += 1;
      await gate;
      return complete(request);
    };
    const def = smallGraph().definition;
    Object.assign(def.nodes.find((n) => n.id === 's')!.data, {
      extraction_enabled: true,
      extraction_variables: [{ name: 'topic', type: 'string', prompt: 'What they want.' }],
    });
    return { lm: counted, def };
  }

  it('the new node answers before the leaving node extraction is in; the turn ends only once it is', async () => {
    const { lm, def } = gated();
    const convo = Conversation.start(setup(lm, new VirtualClock(), WorkflowGraph.fromDefinition(def)));
    const it = convo.send('hi')[Symbol.asyncIterator]();
    const seen: ConversationEvent[] = [];
    for (;;) {
      const next = await it.next();
      seen.push(next.value as ConversationEvent);
      if (next.value?.type === 'message' && next.value.message.role === 'assistant') break;
    }
    expect(seen.at(-1)).toMatchObject({ message: { node_id: 'b', text: 'Here is the other node.' } });
    expect(lm.started).toBe(1); // started at the transition...
    expect(convo.state.gathered_context).toEqual({}); // ...and not in yet
    lm.release();
    const rest: ConversationEvent[] = [];
    for (let next = await it.next(); !next.done; next = await it.next()) rest.push(next.value);
    expect(rest.find((e) => e.type === 'extracted')).toEqual({ type: 'extracted', node_id: 's', values: { topic: 'billing' } });
    expect(convo.state.gathered_context).toEqual({ topic: 'billing' });
    expect(convo.busy).toBe(false);
  });

  it('an aborted turn leaves its extraction running; settle() applies it', async () => {
    const { lm, def } = gated();
    const convo = Conversation.start(setup(lm, new VirtualClock(), WorkflowGraph.fromDefinition(def)));
    const run = (async () => {
      for await (const e of convo.send('hi')) if (e.type === 'delta' && e.node_id === 'b') convo.abort();
    })();
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
    expect(lm.started).toBe(1);
    expect(convo.state.gathered_context).toEqual({});
    lm.release();
    const events = await convo.settle();
    expect(events.map((e) => e.type)).toEqual(['usage', 'message', 'extracted']);
    expect(convo.state.gathered_context).toEqual({ topic: 'billing' });
    expect(convo.state.log.at(-1)).toMatchObject({ type: 'variables_extracted', node_id: 's', values: { topic: 'billing' } });
  });
});
