/**
 * A scripted `LanguageModel` for deterministic tests of anything that talks to a model (in the style of
 * LiveKit's FakeLLM): rules say what to answer, matched on the node (the system prompt contains a text, the
 * tools offered) and on the last user message; replies stream word by word with set delays (on a real or an
 * injected sleep), emit whole tool calls, report usage, or fail. Every request is recorded so a test can
 * assert the system prompt and the tools of each node.
 *
 *   const lm = new ScriptedLanguageModel()
 *     .on({ system: 'Remind', user: /can make it/ }, { text: 'Great!', toolCalls: [{ name: 'will_attend' }] })
 *     .onExtract({ system: 'extracting' }, { value: { will_attend: 'yes' } });
 *
 * Rules are tried in the order added; the first that matches and has uses left answers. No match: the stream
 * (or `complete`) throws an `Error` naming the request, so a missing rule is loud.
 */
import type {
  ChatMessage,
  FinishReason,
  LanguageModel,
  LanguageModelEvent,
  StreamRequest,
  StructuredRequest,
  StructuredResult,
  TokenUsage,
} from '../../core/ports/language-model.port.js';
import { realSleep, type Sleep } from './real-sleep.js';

export interface ScriptedMatch {
  /** The system prompt contains this text (or matches this pattern). */
  system?: string | RegExp;
  /** Every one of these tool names is offered. */
  tools?: string[];
  /** No tool is offered (an endCall node, a goodbye). */
  noTools?: boolean;
  /** The last user message contains this text (or matches this pattern). */
  user?: string | RegExp;
}

export interface ScriptedToolCall {
  name: string;
  /** Raw JSON text; default `{}`. */
  arguments?: string;
  /** Default `call_<n>`, numbered across the model's life. */
  id?: string;
}

export interface ScriptedReply {
  /** Streamed word by word (each word with the space before it). */
  text?: string;
  toolCalls?: ScriptedToolCall[];
  /** Reported after the content; `false` reports none. Default: a deterministic count (see `estimateUsage`). */
  usage?: TokenUsage | false;
  finish?: FinishReason;
  /** Thrown by the stream, after `failAfterWords` words have streamed (default 0). */
  error?: Error;
  failAfterWords?: number;
  /** Before the first event; default 0. */
  firstDelayMs?: number;
  /** Between words; default 0. */
  wordDelayMs?: number;
}

export interface ScriptedExtraction {
  /** The parsed JSON object `complete` returns. */
  value?: Record<string, unknown>;
  usage?: TokenUsage | false;
  error?: Error;
  delayMs?: number;
}

export interface RecordedModelRequest {
  kind: 'stream' | 'complete';
  model: string;
  /** The first system message's text. */
  system: string;
  /** Offered tool names (empty for `complete`). */
  tools: string[];
  /** Tool descriptions by name. */
  toolDescriptions: Record<string, string>;
  /** The last user message's text; '' when there is none. */
  lastUser: string;
  messages: ChatMessage[];
  temperature?: number;
  /** Whether the request carried an AbortSignal. */
  hasSignal: boolean;
  /** `complete` only: the JSON schema asked for. */
  schema?: Record<string, unknown>;
}

export type { Sleep } from './real-sleep.js';

interface Rule<R> {
  when: ScriptedMatch;
  reply: R;
  left: number;
}

export class ScriptedLanguageModel implements LanguageModel {
  readonly requests: RecordedModelRequest[] = [];
  private readonly streamRules: Rule<ScriptedReply>[] = [];
  private readonly completeRules: Rule<ScriptedExtraction>[] = [];
  private readonly sleep: Sleep;
  private nextCallId = 1;

  constructor(options: { sleep?: Sleep } = {}) {
    this.sleep = options.sleep ?? realSleep;
  }

  /** Answers streamed requests matching `when` with `reply`, `times` times (default: always). */
  on(when: ScriptedMatch, reply: ScriptedReply, times = Infinity): this {
    this.streamRules.push({ when, reply, left: times });
    return this;
  }

  /** Answers `complete` (structured) requests matching `when`. */
  onExtract(when: ScriptedMatch, reply: ScriptedExtraction, times = Infinity): this {
    this.completeRules.push({ when, reply, left: times });
    return this;
  }

  get streamRequests(): RecordedModelRequest[] {
    return this.requests.filter((r) => r.kind === 'stream');
  }

  get completeRequests(): RecordedModelRequest[] {
    return this.requests.filter((r) => r.kind === 'complete');
  }

  async *stream(request: StreamRequest): AsyncIterable<LanguageModelEvent> {
    const recorded = record('stream', request);
    this.requests.push(recorded);
    const rule = pick(this.streamRules, recorded);
    const reply = rule.reply;
    const signal = request.signal;
    throwIfAborted(signal);
    if (reply.firstDelayMs) await this.sleep(reply.firstDelayMs, signal);
    throwIfAborted(signal);
    const words = splitWords(reply.text ?? '');
    const failAt = reply.error ? Math.min(reply.failAfterWords ?? 0, words.length) : Infinity;
    for (let i = 0; i < words.length; i++) {
      if (i === failAt) throw reply.error;
      if (i > 0 && reply.wordDelayMs) await this.sleep(reply.wordDelayMs, signal);
      throwIfAborted(signal);
      yield { type: 'text', text: words[i] };
    }
    if (reply.error) throw reply.error;
    for (const call of reply.toolCalls ?? []) {
      throwIfAborted(signal);
      yield {
        type: 'tool_call',
        call: { id: call.id ?? `call_${this.nextCallId++}`, name: call.name, arguments: call.arguments ?? '{}' },
      };
    }
    const usage = reply.usage === undefined ? estimateUsage(request.messages, reply.text ?? '') : reply.usage;
    if (usage) yield { type: 'usage', usage };
    yield { type: 'finish', reason: reply.finish ?? ((reply.toolCalls?.length ?? 0) > 0 ? 'tool_calls' : 'stop') };
  }

  async complete(request: StructuredRequest): Promise<StructuredResult> {
    const recorded = record('complete', request);
    recorded.schema = request.schema.schema;
    this.requests.push(recorded);
    const reply = pick(this.completeRules, recorded).reply;
    throwIfAborted(request.signal);
    if (reply.delayMs) await this.sleep(reply.delayMs, request.signal);
    throwIfAborted(request.signal);
    if (reply.error) throw reply.error;
    const value = reply.value ?? {};
    const text = JSON.stringify(value);
    const usage = reply.usage === undefined ? estimateUsage(request.messages, text) : reply.usage;
    return { value: structuredClone(value), text, ...(usage ? { usage } : {}) };
  }
}

/** A deterministic stand-in for token counts: prompt = ceil(characters / 4), completion = words + 1. */
export function estimateUsage(messages: ChatMessage[], answer: string): TokenUsage {
  const chars = messages.reduce((n, m) => n + m.content.length, 0);
  return { promptTokens: Math.ceil(chars / 4), completionTokens: splitWords(answer).length + 1 };
}

/** `"Hi there, you"` → `["Hi", " there,", " you"]`: joined back they are the text. */
export function splitWords(text: string): string[] {
  return text.match(/\s*\S+|\s+$/gu) ?? [];
}

function record(kind: 'stream' | 'complete', request: StreamRequest | StructuredRequest): RecordedModelRequest {
  const messages = structuredClone(request.messages);
  const tools = 'tools' in request ? (request.tools ?? []) : [];
  const lastUser = [...messages].reverse().find((m) => m.role === 'user');
  return {
    kind,
    model: request.model,
    system: messages.find((m) => m.role === 'system')?.content ?? '',
    tools: tools.map((t) => t.name),
    toolDescriptions: Object.fromEntries(tools.map((t) => [t.name, t.description])),
    lastUser: lastUser?.content ?? '',
    messages,
    hasSignal: request.signal instanceof AbortSignal,
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
  };
}

function pick<R>(rules: Rule<R>[], request: RecordedModelRequest): Rule<R> {
  const rule = rules.find((r) => r.left > 0 && matches(r.when, request));
  if (!rule) {
    throw new Error(
      `ScriptedLanguageModel: no ${request.kind} rule matches (system: ${JSON.stringify(request.system.slice(0, 120))}, ` +
        `tools: [${request.tools.join(', ')}], last user: ${JSON.stringify(request.lastUser.slice(0, 120))})`,
    );
  }
  rule.left -= 1;
  return rule;
}

function matches(when: ScriptedMatch, request: RecordedModelRequest): boolean {
  if (when.system !== undefined && !test(when.system, request.system)) return false;
  if (when.user !== undefined && !test(when.user, request.lastUser)) return false;
  if (when.tools && !when.tools.every((t) => request.tools.includes(t))) return false;
  if (when.noTools && request.tools.length > 0) return false;
  return true;
}

function test(pattern: string | RegExp, text: string): boolean {
  return typeof pattern === 'string' ? text.includes(pattern) : pattern.test(text);
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new DOMException('the model request was aborted', 'AbortError');
}

/**
 * Virtual time for tests: a `Clock` whose `sleep` advances it instantly, so scripted word delays cost no real
 * time and every timestamp is predictable.
 */
export class VirtualClock {
  private ms: number;
  constructor(start: Date | string = '2026-01-05T09:00:00.000Z') {
    this.ms = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.ms);
  }

  advance(ms: number): void {
    this.ms += ms;
  }

  /** A `Sleep` for `ScriptedLanguageModel`: advances this clock, yields once, honours aborts. */
  readonly sleep: Sleep = async (ms, signal) => {
    throwIfAborted(signal);
    this.advance(ms);
    await Promise.resolve();
    throwIfAborted(signal);
  };
}
