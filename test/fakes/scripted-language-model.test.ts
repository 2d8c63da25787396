import { describe, expect, it } from '@jest/globals';
import { ProviderApiError } from '../../core/errors.js';
import type { LanguageModelEvent, StreamRequest } from '../../core/ports/language-model.port.js';
import { runLanguageModelContract } from '../contracts/language-model.contract.js';
import { ScriptedLanguageModel, VirtualClock, estimateUsage, splitWords } from './scripted-language-model.js';

const tool = (name: string) => ({ name, description: `take ${name}`, parameters: { type: 'object', properties: {} } });

function request(system: string, user: string, tools: string[] = [], signal?: AbortSignal): StreamRequest {
  return {
    model: 'm',
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: user },
    ],
    tools: tools.map(tool),
    ...(signal ? { signal } : {}),
  };
}

async function all(events: AsyncIterable<LanguageModelEvent>): Promise<LanguageModelEvent[]> {
  const out: LanguageModelEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

describe('ScriptedLanguageModel', () => {
  it('matches on the system prompt, the tools offered and the last user message; first matching rule with uses left wins', async () => {
    const lm = new ScriptedLanguageModel()
      .on({ system: 'node A', tools: ['go'], user: /^yes/i }, { text: 'A yes' }, 1)
      .on({ system: 'node A', noTools: true }, { text: 'A without tools' })
      .on({ system: 'node A' }, { text: 'A fallback' });
    const text = async (r: StreamRequest) =>
      (await all(lm.stream(r))).flatMap((e) => (e.type === 'text' ? [e.text] : [])).join('');
    expect(await text(request('in node A', 'Yes please', ['go', 'stop']))).toBe('A yes');
    expect(await text(request('in node A', 'Yes please', ['go']))).toBe('A fallback'); // the first rule is used up
    expect(await text(request('in node A', 'Yes please'))).toBe('A without tools');
    await expect(all(lm.stream(request('node B', 'hi', ['x'])))).rejects.toThrow(
      'ScriptedLanguageModel: no stream rule matches (system: "node B", tools: [x], last user: "hi")',
    );
    expect(lm.streamRequests.map((r) => [r.system, r.tools, r.lastUser])).toEqual([
      ['in node A', ['go', 'stop'], 'Yes please'],
      ['in node A', ['go'], 'Yes please'],
      ['in node A', [], 'Yes please'],
      ['node B', ['x'], 'hi'],
    ]);
    expect(lm.streamRequests[0].toolDescriptions).toEqual({ go: 'take go', stop: 'take stop' });
  });

  it('streams words, then whole tool calls with ids, then usage, then finish', async () => {
    const lm = new ScriptedLanguageModel().on({}, { text: 'Hi there', toolCalls: [{ name: 'go' }, { name: 'x', id: 'mine', arguments: '{"a":1}' }], usage: { promptTokens: 7, completionTokens: 3 } });
    expect(await all(lm.stream(request('s', 'u')))).toEqual([
      { type: 'text', text: 'Hi' },
      { type: 'text', text: ' there' },
      { type: 'tool_call', call: { id: 'call_1', name: 'go', arguments: '{}' } },
      { type: 'tool_call', call: { id: 'mine', name: 'x', arguments: '{"a":1}' } },
      { type: 'usage', usage: { promptTokens: 7, completionTokens: 3 } },
      { type: 'finish', reason: 'tool_calls' },
    ]);
  });

  it('fails after the words asked for, and honours an abort between words', async () => {
    const boom = new Error('boom');
    const lm = new ScriptedLanguageModel().on({ user: 'fail' }, { text: 'a b c', error: boom, failAfterWords: 2 }).on({ user: 'slow' }, { text: 'a b c', wordDelayMs: 10 });
    const seen: LanguageModelEvent[] = [];
    await expect((async () => { for await (const e of lm.stream(request('s', 'fail'))) seen.push(e); })()).rejects.toBe(boom);
    expect(seen).toEqual([{ type: 'text', text: 'a' }, { type: 'text', text: ' b' }]);
    const controller = new AbortController();
    await expect(
      (async () => {
        for await (const e of lm.stream(request('s', 'slow', [], controller.signal))) if (e.type === 'text') controller.abort();
      })(),
    ).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('word delays run on virtual time when given its sleep', async () => {
    const clock = new VirtualClock('2026-01-05T09:00:00.000Z');
    const lm = new ScriptedLanguageModel({ sleep: clock.sleep }).on({}, { text: 'a b c', firstDelayMs: 250, wordDelayMs: 100 });
    await all(lm.stream(request('s', 'u')));
    expect(clock.now().toISOString()).toBe('2026-01-05T09:00:00.450Z');
  });

  it('answers structured requests from extraction rules and records the schema', async () => {
    const lm = new ScriptedLanguageModel().onExtract({ user: 'will_attend' }, { value: { will_attend: 'yes' }, usage: false });
    const result = await lm.complete({
      model: 'm',
      messages: [{ role: 'user', content: 'extract will_attend' }],
      schema: { name: 'extraction', schema: { type: 'object' } },
    });
    expect(result).toEqual({ value: { will_attend: 'yes' }, text: '{"will_attend":"yes"}' });
    expect(lm.completeRequests[0].schema).toEqual({ type: 'object' });
  });

  it('splits words so they join back to the text, and estimates usage deterministically', () => {
    expect(splitWords(' Hi  there, you ')).toEqual([' Hi', '  there,', ' you', ' ']);
    expect(splitWords('')).toEqual([]);
    expect(estimateUsage([{ role: 'user', content: '12345678' }], 'a b')).toEqual({ promptTokens: 2, completionTokens: 3 });
  });
});

// The scripted model keeps the port's promises too, so engine tests on it mean what they say.
runLanguageModelContract('ScriptedLanguageModel', async () => {
  const lm = new ScriptedLanguageModel();
  return {
    model: lm,
    answerText: (text) => void lm.on({}, { text }, 1),
    answerToolCalls: (calls, text) => void lm.on({}, { ...(text ? { text } : {}), toolCalls: calls }, 1),
    answerSlowly: (text, delayMs) => void lm.on({}, { text, wordDelayMs: delayMs }, 1),
    failNext: () => {
      const error = new ProviderApiError('scripted', 'the scripted provider failed');
      lm.on({}, { error }, 1).onExtract({}, { error }, 1);
    },
    answerJson: (value) => void lm.onExtract({}, { value }, 1),
    close: async () => {},
  };
});
