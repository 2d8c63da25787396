import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { ProviderApiError } from '../../core/errors.js';
import type { ChatMessage, LanguageModelEvent } from '../../core/ports/language-model.port.js';
import { collectLanguageModelEvents, expectLanguageModelEventOrder, runLanguageModelContract } from '../../test/contracts/language-model.contract.js';
import { FakeOpenAiServer } from '../../test/fakes/openai/fake-openai-server.js';
import { createOpenAiLanguageModel, type OpenAiLanguageModelOptions } from './openai-language-model.js';

runLanguageModelContract('openai (fake OpenAI server)', async () => {
  const fake = await FakeOpenAiServer.start();
  return {
    model: createOpenAiLanguageModel({ baseUrl: fake.baseUrl, retryBaseDelayMs: 1, maxRetries: 0 }),
    answerText: (text) => void fake.reply({ text }),
    answerToolCalls: (calls, text) => void fake.reply({ text, toolCalls: calls }),
    answerSlowly: (text, delayMs) => void fake.reply({ text, eventDelayMs: delayMs }),
    failNext: () => void fake.fail({ status: 400, error: { message: 'The model `test-model` does not exist', type: 'invalid_request_error', code: 'model_not_found' } }),
    answerJson: (value) => void fake.reply({ text: JSON.stringify(value) }),
    close: () => fake.close(),
  };
});

const texts = (events: LanguageModelEvent[]) => events.flatMap((e) => (e.type === 'text' ? [e.text] : []));
const calls = (events: LanguageModelEvent[]) => events.flatMap((e) => (e.type === 'tool_call' ? [e.call] : []));
const messages: ChatMessage[] = [
  { role: 'system', content: 'You are the receptionist of a dental office.' },
  { role: 'user', content: 'Can I come on Tuesday?' },
];
const tools = [
  { name: 'look_up', description: 'Look up a free slot.', parameters: { type: 'object', properties: { day: { type: 'string' } }, required: ['day'] } },
  { name: 'end_call', description: 'The caller is done.', parameters: { type: 'object', properties: {} } },
];

describe('openai LanguageModel against the fake server', () => {
  let fake: FakeOpenAiServer;
  const model = (opts: Partial<OpenAiLanguageModelOptions> = {}) => createOpenAiLanguageModel({ baseUrl: fake.baseUrl, retryBaseDelayMs: 1, ...opts });

  beforeEach(async () => {
    fake = await FakeOpenAiServer.start();
  });
  afterEach(async () => {
    await fake.close();
  });

  it("sends OpenAI's wire shape: tools, tool_choice, stream_options.include_usage, assistant tool_calls and tool messages", async () => {
    fake.reply({ text: 'Tuesday at ten is free.' });
    const history: ChatMessage[] = [
      ...messages,
      { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'look_up', arguments: '{"day":"Tuesday"}' }] },
      { role: 'tool', toolCallId: 'call_1', content: '10:00' },
      { role: 'assistant', content: 'Let me see.', toolCalls: [{ id: 'call_2', name: 'look_up', arguments: '{}' }] },
      { role: 'tool', toolCallId: 'call_2', content: 'none' },
    ];
    await collectLanguageModelEvents(model().stream({ model: 'gpt-4o-mini', messages: history, tools, temperature: 0.2, maxTokens: 200 }));
    expect(fake.requests[0]?.body).toEqual({
      model: 'gpt-4o-mini',
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.2,
      max_tokens: 200,
      tool_choice: 'auto',
      tools: [
        { type: 'function', function: { name: 'look_up', description: 'Look up a free slot.', parameters: tools[0]?.parameters } },
        { type: 'function', function: { name: 'end_call', description: 'The caller is done.', parameters: { type: 'object', properties: {} } } },
      ],
      messages: [
        { role: 'system', content: 'You are the receptionist of a dental office.' },
        { role: 'user', content: 'Can I come on Tuesday?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'look_up', arguments: '{"day":"Tuesday"}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: '10:00' },
        { role: 'assistant', content: 'Let me see.', tool_calls: [{ id: 'call_2', type: 'function', function: { name: 'look_up', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_2', content: 'none' },
      ],
    });
  });

  it('sends no tools or tool_choice when none are offered', async () => {
    await collectLanguageModelEvents(model().stream({ model: 'm', messages, tools: [] }));
    expect(fake.requests[0]?.body).not.toHaveProperty('tools');
    expect(fake.requests[0]?.body).not.toHaveProperty('tool_choice');
  });

  it('streams words as text deltas, then the usage chunk (empty choices), then finish', async () => {
    fake.reply({ text: 'Tuesday at ten is free.', usage: { prompt_tokens: 31, completion_tokens: 7 } });
    const events = await collectLanguageModelEvents(model().stream({ model: 'm', messages }));
    expect(texts(events)).toEqual(['Tuesday ', 'at ', 'ten ', 'is ', 'free.']);
    expect(events.slice(-2)).toEqual([
      { type: 'usage', usage: { promptTokens: 31, completionTokens: 7 } },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it('joins fragmented arguments of parallel calls with distinct indexes', async () => {
    fake.reply({
      toolCalls: [
        { id: 'call_a', name: 'look_up', arguments: '{"day": "Tuesday, the 3rd"}' },
        { id: 'call_b', name: 'end_call', arguments: '{}' },
      ],
      argumentsFragment: 3,
    });
    const events = await collectLanguageModelEvents(model().stream({ model: 'm', messages, tools }));
    expectLanguageModelEventOrder(events);
    expect(calls(events)).toEqual([
      { id: 'call_a', name: 'look_up', arguments: '{"day": "Tuesday, the 3rd"}' },
      { id: 'call_b', name: 'end_call', arguments: '{}' },
    ]);
    expect(events[events.length - 1]).toEqual({ type: 'finish', reason: 'tool_calls' });
  });

  it('joins parallel calls that all stream at index 0 (a new id starts a new call)', async () => {
    fake.reply({
      toolCalls: [
        { id: 'call_a', name: 'look_up', arguments: '{"day": "Monday"}' },
        { id: 'call_b', name: 'look_up', arguments: '{"day": "Friday"}' },
      ],
      toolCallIndexes: 'zero',
      argumentsFragment: 2,
    });
    const events = await collectLanguageModelEvents(model().stream({ model: 'm', messages, tools }));
    expect(calls(events)).toEqual([
      { id: 'call_a', name: 'look_up', arguments: '{"day": "Monday"}' },
      { id: 'call_b', name: 'look_up', arguments: '{"day": "Friday"}' },
    ]);
  });

  it('mode auto: when streamed tool calls are dropped, asks again without streaming and then stops streaming with tools', async () => {
    const m = model({ streamingToolCalls: 'auto' });
    fake.reply(
      { toolCalls: [{ id: 'call_a', name: 'end_call', arguments: '{}' }], dropStreamedToolCalls: true, usage: { prompt_tokens: 10, completion_tokens: 1 } },
      { toolCalls: [{ id: 'call_a', name: 'end_call', arguments: '{}' }], usage: { prompt_tokens: 10, completion_tokens: 3 } },
    );
    const events = await collectLanguageModelEvents(m.stream({ model: 'm', messages, tools }));
    expectLanguageModelEventOrder(events);
    expect(calls(events)).toEqual([{ id: 'call_a', name: 'end_call', arguments: '{}' }]);
    // Both requests were billed.
    expect(events.find((e) => e.type === 'usage')).toEqual({ type: 'usage', usage: { promptTokens: 20, completionTokens: 4 } });
    expect(fake.requests.map((r) => r.stream)).toEqual([true, false]);
    expect(m.streamsToolCalls).toBe(false);

    // Remembered: the next request with tools is answered whole at once; one without tools still streams.
    fake.reply({ text: 'Sure.', toolCalls: [{ id: 'call_b', name: 'look_up', arguments: '{"day":"Mon"}' }] }, { text: 'Bye now.' });
    const next = await collectLanguageModelEvents(m.stream({ model: 'm', messages, tools }));
    expect(texts(next)).toEqual(['Sure.']);
    expect(calls(next)).toEqual([{ id: 'call_b', name: 'look_up', arguments: '{"day":"Mon"}' }]);
    expectLanguageModelEventOrder(next);
    await collectLanguageModelEvents(m.stream({ model: 'm', messages }));
    expect(fake.requests.map((r) => r.stream)).toEqual([true, false, false, true]);
  });

  it('mode auto: an empty streamed answer to a request with tools is asked again; text already said is not repeated', async () => {
    const m = model();
    fake.reply(
      { text: 'One moment', dropStreamedToolCalls: true, toolCalls: [{ id: 'c', name: 'end_call', arguments: '{}' }] },
      { text: 'One moment please.', toolCalls: [{ id: 'c', name: 'end_call', arguments: '{}' }] },
    );
    const events = await collectLanguageModelEvents(m.stream({ model: 'm', messages, tools }));
    expect(texts(events).join('')).toBe('One moment please.');
    expect(calls(events)).toHaveLength(1);

    const m2 = model();
    fake.reply({ text: '', finishReason: 'stop' }, { text: 'Hello!' });
    const empty = await collectLanguageModelEvents(m2.stream({ model: 'm', messages, tools }));
    expect(texts(empty)).toEqual(['Hello!']);
    // The whole answer brought no tool call either: nothing is learned.
    expect(m2.streamsToolCalls).toBe(true);
  });

  it('mode auto: a text answer with tools offered is not asked again', async () => {
    fake.reply({ text: 'Tuesday works.' });
    await collectLanguageModelEvents(model().stream({ model: 'm', messages, tools }));
    expect(fake.requests).toHaveLength(1);
  });

  it('mode yes: never falls back (the answer is what the stream said)', async () => {
    fake.reply({ toolCalls: [{ id: 'c', name: 'end_call', arguments: '{}' }], dropStreamedToolCalls: true });
    const events = await collectLanguageModelEvents(model({ streamingToolCalls: 'yes' }).stream({ model: 'm', messages, tools }));
    expect(calls(events)).toEqual([]);
    expect(fake.requests).toHaveLength(1);
  });

  it('mode no: a request with tools is answered whole (text, calls, usage, finish); one without tools streams', async () => {
    const m = model({ streamingToolCalls: 'no' });
    fake.reply({ text: 'Checking.', toolCalls: [{ id: 'c', name: 'look_up', arguments: '{"day":"Tue"}' }], usage: { prompt_tokens: 5, completion_tokens: 6 } });
    const events = await collectLanguageModelEvents(m.stream({ model: 'm', messages, tools }));
    expect(events).toEqual([
      { type: 'text', text: 'Checking.' },
      { type: 'tool_call', call: { id: 'c', name: 'look_up', arguments: '{"day":"Tue"}' } },
      { type: 'usage', usage: { promptTokens: 5, completionTokens: 6 } },
      { type: 'finish', reason: 'tool_calls' },
    ]);
    await collectLanguageModelEvents(m.stream({ model: 'm', messages }));
    expect(fake.requests.map((r) => r.stream)).toEqual([false, true]);
  });

  it('retries a 429 before the first event, so the caller sees one clean answer', async () => {
    fake.rateLimitNext(1, 0);
    fake.failNext(1, 503, 'The engine is currently overloaded, please try again later');
    fake.reply({ text: 'Hello there.' });
    const events = await collectLanguageModelEvents(model().stream({ model: 'm', messages }));
    expect(texts(events).join('')).toBe('Hello there.');
    expect(fake.requests.map((r) => r.status)).toEqual([429, 503, 200]);
  });

  it('a cut connection after the first words is a ProviderApiError, not a second request', async () => {
    fake.reply({ text: 'Tuesday at ten is free.', cutAfterEvents: 3 });
    const seen: LanguageModelEvent[] = [];
    let error: unknown;
    try {
      for await (const e of model().stream({ model: 'm', messages })) seen.push(e);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ProviderApiError);
    expect(texts(seen)).toEqual(['Tuesday ', 'at ']);
    expect(fake.requests).toHaveLength(1);
  });

  it('maps stop/length/content_filter/unknown finish reasons', async () => {
    fake.reply({ text: 'a', finishReason: 'length' }, { text: 'b', finishReason: 'content_filter' }, { text: 'c', finishReason: 'eos' });
    const reasons: unknown[] = [];
    for (let i = 0; i < 3; i++) reasons.push((await collectLanguageModelEvents(model().stream({ model: 'm', messages }))).at(-1));
    expect(reasons).toEqual([
      { type: 'finish', reason: 'length' },
      { type: 'finish', reason: 'content_filter' },
      { type: 'finish', reason: 'other' },
    ]);
  });

  it('a server that says "stop" after streaming tool calls finishes with tool_calls', async () => {
    fake.reply({ toolCalls: [{ id: 'c', name: 'end_call', arguments: '{}' }], finishReason: 'stop' });
    const events = await collectLanguageModelEvents(model().stream({ model: 'm', messages, tools }));
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'tool_calls' });
  });

  describe('complete (structured answers)', () => {
    const schema = { name: 'dental extraction', schema: { type: 'object', properties: { will_attend: { type: 'boolean' } }, required: ['will_attend'], additionalProperties: false } };

    it('asks for a strict json_schema response_format and reads the object and usage', async () => {
      fake.reply({ text: '{"will_attend": true}', usage: { prompt_tokens: 40, completion_tokens: 6 } });
      const result = await model().complete({ model: 'gpt-4o-mini', messages, schema, temperature: 0 });
      expect(result).toEqual({ value: { will_attend: true }, text: '{"will_attend": true}', usage: { promptTokens: 40, completionTokens: 6 } });
      expect(fake.requests[0]?.body).toEqual({
        model: 'gpt-4o-mini',
        stream: false,
        temperature: 0,
        messages: [
          { role: 'system', content: 'You are the receptionist of a dental office.' },
          { role: 'user', content: 'Can I come on Tuesday?' },
        ],
        response_format: { type: 'json_schema', json_schema: { name: 'dental_extraction', strict: true, schema: schema.schema } },
      });
    });

    it('falls back to json_object, then to none, when the server rejects response_format; and remembers', async () => {
      await fake.close();
      fake = await FakeOpenAiServer.start({ rejectResponseFormats: ['json_schema', 'json_object'] });
      const m = model();
      fake.reply({ text: 'Sure! ```json\n{"will_attend": false}\n```' });
      const result = await m.complete({ model: 'llama3', messages, schema });
      expect(result.value).toEqual({ will_attend: false });
      expect(fake.requests.map((r) => [r.status, (r.body?.response_format as { type?: string } | undefined)?.type])).toEqual([
        [400, 'json_schema'],
        [400, 'json_object'],
        [200, undefined],
      ]);
      // The schema-less requests tell the model the schema.
      const last = fake.requests[2]?.body?.messages as Array<{ role: string; content: string }>;
      expect(last.at(-1)).toEqual({ role: 'system', content: expect.stringContaining('JSON Schema') });
      expect(last.at(-1)?.content).toContain('"will_attend"');
      expect(m.responseFormat).toBe('none');

      fake.reply({ text: '{"will_attend": true}' });
      await m.complete({ model: 'llama3', messages, schema });
      expect(fake.requests).toHaveLength(4);
      expect(fake.requests[3]?.body).not.toHaveProperty('response_format');
    });

    it('stops at json_object when the server supports it', async () => {
      await fake.close();
      fake = await FakeOpenAiServer.start({ rejectResponseFormats: ['json_schema'] });
      const m = model();
      fake.reply({ text: '{"will_attend": true}' });
      await m.complete({ model: 'm', messages, schema });
      expect(fake.requests.map((r) => (r.body?.response_format as { type?: string }).type)).toEqual(['json_schema', 'json_object']);
      expect(m.responseFormat).toBe('json_object');
    });

    it('does not fall back on a 400 that is not about response_format', async () => {
      fake.fail({ status: 400, error: { message: "Invalid value for 'temperature'.", type: 'invalid_request_error' } });
      await expect(model().complete({ model: 'm', messages, schema })).rejects.toMatchObject({ detail: "Invalid value for 'temperature'.", retryable: false });
      expect(fake.requests).toHaveLength(1);
    });

    it('an answer without a JSON object is a ProviderApiError', async () => {
      fake.reply({ text: 'I am not sure what you mean.' });
      await expect(model().complete({ model: 'm', messages, schema })).rejects.toMatchObject({ provider: 'openai', detail: 'The model answered no JSON object' });
    });
  });
});
