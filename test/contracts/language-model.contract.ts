import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { ProviderApiError } from '../../core/errors.js';
import type { ChatMessage, LanguageModel, LanguageModelEvent } from '../../core/ports/language-model.port.js';

/**
 * What the shared LanguageModel contract needs from an adapter's test: the model, and a way to decide what it
 * answers to the next request (through a fake server, a script, ...).
 */
export interface LanguageModelContractHarness {
  model: LanguageModel;
  /** The next request is answered with `text` (streamed as several deltas where the adapter streams). */
  answerText(text: string): void;
  /** The next request is answered with these tool calls (`arguments`: JSON text), after `text` when given. */
  answerToolCalls(calls: Array<{ name: string; arguments: string }>, text?: string): void;
  /** The next request is answered with `text`, one word every `delayMs` (long enough to abort in between). */
  answerSlowly(text: string, delayMs: number): void;
  /** The next request fails at the provider (refused or broken). */
  failNext(): void;
  /** The next structured request is answered with this object. */
  answerJson(value: Record<string, unknown>): void;
  close(): Promise<void>;
}

/**
 * The port's ordering rule: any number of `text` and `tool_call` events, at most one `usage` after all of them,
 * then exactly one `finish`, last. Each tool call whole: an id, a name and arguments that parse as JSON.
 */
export function expectLanguageModelEventOrder(events: LanguageModelEvent[]): void {
  expect(events.length).toBeGreaterThan(0);
  expect(events[events.length - 1]?.type).toBe('finish');
  expect(events.filter((e) => e.type === 'finish')).toHaveLength(1);
  const usages = events.flatMap((e, i) => (e.type === 'usage' ? [i] : []));
  expect(usages.length).toBeLessThanOrEqual(1);
  if (usages.length === 1) expect(usages[0]).toBe(events.length - 2);
  const ids = new Set<string>();
  for (const e of events) {
    if (e.type !== 'tool_call') continue;
    expect(e.call.id).toEqual(expect.any(String));
    expect(ids.has(e.call.id)).toBe(false);
    ids.add(e.call.id);
    expect(e.call.name).not.toBe('');
    expect(() => JSON.parse(e.call.arguments) as unknown).not.toThrow();
  }
}

export async function collectLanguageModelEvents(stream: AsyncIterable<LanguageModelEvent>): Promise<LanguageModelEvent[]> {
  const events: LanguageModelEvent[] = [];
  for await (const e of stream) events.push(e);
  return events;
}

const conversation: ChatMessage[] = [
  { role: 'system', content: 'You are a helpful receptionist.' },
  { role: 'user', content: 'Hello?' },
];
const transferTool = { name: 'transfer_to_billing', description: 'The caller asks about an invoice.', parameters: { type: 'object', properties: {} } };
const lookupTool = {
  name: 'look_up',
  description: 'Look up a booking.',
  parameters: { type: 'object', properties: { day: { type: 'string' } }, required: ['day'] },
};

/** The contract every LanguageModel adapter runs (docs/providers.md). */
export function runLanguageModelContract(label: string, setup: () => Promise<LanguageModelContractHarness>): void {
  describe(`LanguageModel contract: ${label}`, () => {
    let h: LanguageModelContractHarness;
    beforeEach(async () => {
      h = await setup();
    });
    afterEach(async () => {
      await h.close();
    });

    it('streams a text answer as deltas, then at most one usage, then finish "stop" last', async () => {
      h.answerText('Good morning, this is the dental office.');
      const events = await collectLanguageModelEvents(h.model.stream({ model: 'test-model', messages: conversation }));
      expectLanguageModelEventOrder(events);
      const text = events.flatMap((e) => (e.type === 'text' ? [e.text] : [])).join('');
      expect(text).toBe('Good morning, this is the dental office.');
      expect(events.some((e) => e.type === 'tool_call')).toBe(false);
      expect(events[events.length - 1]).toEqual({ type: 'finish', reason: 'stop' });
      const usage = events.find((e) => e.type === 'usage');
      if (usage?.type === 'usage') {
        expect(usage.usage.promptTokens).toBeGreaterThanOrEqual(0);
        expect(usage.usage.completionTokens).toBeGreaterThanOrEqual(0);
      }
    });

    it('yields each tool call once and whole, with its arguments, and finishes with "tool_calls"', async () => {
      h.answerToolCalls([
        { name: 'look_up', arguments: '{"day": "Tuesday"}' },
        { name: 'transfer_to_billing', arguments: '{}' },
      ], 'One moment.');
      const events = await collectLanguageModelEvents(h.model.stream({ model: 'test-model', messages: conversation, tools: [lookupTool, transferTool] }));
      expectLanguageModelEventOrder(events);
      const calls = events.flatMap((e) => (e.type === 'tool_call' ? [e.call] : []));
      expect(calls.map((c) => c.name)).toEqual(['look_up', 'transfer_to_billing']);
      expect(JSON.parse(calls[0]?.arguments ?? '')).toEqual({ day: 'Tuesday' });
      expect(JSON.parse(calls[1]?.arguments ?? '')).toEqual({});
      expect(events[events.length - 1]).toEqual({ type: 'finish', reason: 'tool_calls' });
    });

    it('ends a stream promptly with an AbortError when the signal aborts', async () => {
      h.answerSlowly('one two three four five six seven eight nine ten', 300);
      const controller = new AbortController();
      const started = Date.now();
      const seen: LanguageModelEvent[] = [];
      const run = (async () => {
        for await (const e of h.model.stream({ model: 'test-model', messages: conversation, signal: controller.signal })) {
          seen.push(e);
          if (e.type === 'text') controller.abort();
        }
      })();
      await expect(run).rejects.toMatchObject({ name: 'AbortError' });
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(seen.some((e) => e.type === 'finish')).toBe(false);
    });

    it('refuses to start when the signal is already aborted (stream and complete)', async () => {
      h.answerText('Never said.');
      h.answerJson({ never: true });
      const controller = new AbortController();
      controller.abort();
      await expect(collectLanguageModelEvents(h.model.stream({ model: 'test-model', messages: conversation, signal: controller.signal }))).rejects.toMatchObject({ name: 'AbortError' });
      await expect(
        h.model.complete({ model: 'test-model', messages: conversation, schema: { name: 'extraction', schema: { type: 'object' } }, signal: controller.signal }),
      ).rejects.toMatchObject({ name: 'AbortError' });
    });

    it('answers a structured request with the parsed object and its raw text', async () => {
      h.answerJson({ will_attend: true, name: 'Ann' });
      const result = await h.model.complete({
        model: 'test-model',
        messages: [...conversation, { role: 'user', content: 'Extract the values.' }],
        schema: { name: 'extraction', schema: { type: 'object', properties: { will_attend: { type: 'boolean' }, name: { type: 'string' } } } },
      });
      expect(result.value).toEqual({ will_attend: true, name: 'Ann' });
      expect(JSON.parse(result.text)).toEqual({ will_attend: true, name: 'Ann' });
    });

    it('reports a provider failure as ProviderApiError, from the stream and from complete', async () => {
      h.failNext();
      await expect(collectLanguageModelEvents(h.model.stream({ model: 'test-model', messages: conversation }))).rejects.toBeInstanceOf(ProviderApiError);
      h.failNext();
      await expect(h.model.complete({ model: 'test-model', messages: conversation, schema: { name: 'x', schema: { type: 'object' } } })).rejects.toBeInstanceOf(
        ProviderApiError,
      );
    });
  });
}
