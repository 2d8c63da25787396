/**
 * The LanguageModel port (core/ports/language-model.port.ts) on any OpenAI-compatible chat completions server.
 * It maps Callplane's messages and tools to OpenAI's wire shape, turns streamed chunks into the port's events
 * (text deltas, whole tool calls, usage, finish) and reads structured answers. The transport (retries,
 * timeouts, abort, error mapping) is openai.client.ts. docs/providers.md, "OpenAI and compatible servers".
 *
 * Streamed tool calls: some servers (Ollama in several versions, some proxies) drop `tool_calls` when streaming.
 * `streamingToolCalls` says what this service does: `yes` streams always; `no` asks for a whole answer whenever
 * tools are offered; `auto` (default) streams, and when tools were offered but no tool call arrived although the
 * answer finished with `tool_calls` (or said nothing at all), asks again without streaming; if that answer has
 * the calls, this instance remembers that the server drops them and stops streaming requests with tools.
 *
 * Structured answers: `response_format` `json_schema` (strict); a server that rejects it (400 naming
 * `response_format`) is asked again with `json_object`, then with none, and the instance remembers the level
 * that worked. The answer is parsed tolerantly (json-answer.ts).
 */
import { abortError, ProviderApiError } from '../../plugins/sdk.js';
import type {
  ChatMessage,
  FinishReason,
  LanguageModel,
  LanguageModelEvent,
  StreamRequest,
  StructuredRequest,
  StructuredResult,
  TokenUsage,
  ToolCall,
  ToolSpec,
} from '../../core/ports/language-model.port.js';
import { parseJsonAnswer } from './json-answer.js';
import { ToolCallJoiner } from './openai-language-model.tool-calls.js';
import { OPENAI_PROVIDER, OpenAiApiError, OpenAiClient, type ChatCompletion, type OpenAiClientOptions, type WireUsage } from './openai.client.js';

export type StreamingToolCalls = 'auto' | 'yes' | 'no';

export interface OpenAiLanguageModelOptions extends OpenAiClientOptions {
  /** Whether this server streams tool calls (see the file comment). Default `auto`. */
  streamingToolCalls?: StreamingToolCalls;
}

/** A LanguageModel for one OpenAI-compatible service (one instance per service: it learns the server's quirks). */
export function createOpenAiLanguageModel(opts: OpenAiLanguageModelOptions): OpenAiLanguageModel {
  return new OpenAiLanguageModel(opts);
}

/** The response_format levels tried in order by `complete`. */
const RESPONSE_FORMATS = ['json_schema', 'json_object', 'none'] as const;
type ResponseFormatLevel = 0 | 1 | 2;

export class OpenAiLanguageModel implements LanguageModel {
  private readonly client: OpenAiClient;
  private readonly mode: StreamingToolCalls;
  private dropsStreamedToolCalls = false;
  private formatLevel: ResponseFormatLevel = 0;

  constructor(opts: OpenAiLanguageModelOptions) {
    this.client = new OpenAiClient(opts);
    this.mode = opts.streamingToolCalls ?? 'auto';
  }

  /** False once a request with tools is answered whole (mode `no`, or learned in mode `auto`). */
  get streamsToolCalls(): boolean {
    return this.mode === 'yes' || (this.mode === 'auto' && !this.dropsStreamedToolCalls);
  }

  /** The response_format `complete` asks for next (`none`: tolerant parsing only). */
  get responseFormat(): (typeof RESPONSE_FORMATS)[number] {
    return RESPONSE_FORMATS[this.formatLevel];
  }

  stream(request: StreamRequest): AsyncIterable<LanguageModelEvent> {
    return this.streamEvents(request);
  }

  private async *streamEvents(request: StreamRequest): AsyncGenerator<LanguageModelEvent> {
    const { signal } = request;
    throwIfAborted(signal);
    const body = chatBody(request);
    const withTools = (request.tools?.length ?? 0) > 0;
    if (withTools && !this.streamsToolCalls) {
      const whole = await this.client.complete(body, signal);
      throwIfAborted(signal);
      const answer = readCompletion(whole);
      if (answer.text !== '') yield { type: 'text', text: answer.text };
      yield* closingEvents(answer.calls, answer.usage, answer.finishReason);
      return;
    }

    const joiner = new ToolCallJoiner();
    let text = '';
    let finishReason: string | undefined;
    let usage: TokenUsage | undefined;
    for await (const chunk of this.client.stream({ ...body, stream_options: { include_usage: true } }, signal)) {
      throwIfAborted(signal);
      if (chunk.usage) usage = toUsage(chunk.usage);
      const choice = chunk.choices?.find((c) => (c?.index ?? 0) === 0);
      if (!choice) continue;
      const content = choice.delta?.content;
      if (typeof content === 'string' && content !== '') {
        text += content;
        yield { type: 'text', text: content };
      }
      for (const fragment of choice.delta?.tool_calls ?? []) joiner.add(fragment);
      if (typeof choice.finish_reason === 'string' && choice.finish_reason !== '') finishReason = choice.finish_reason;
    }

    let calls = joiner.calls();
    const toolCallsLost = calls.length === 0 && (finishReason === 'tool_calls' || finishReason === 'function_call' || text.trim() === '');
    if (withTools && this.mode === 'auto' && toolCallsLost) {
      const whole = readCompletion(await this.client.complete(body, signal));
      throwIfAborted(signal);
      if (whole.calls.length > 0) this.dropsStreamedToolCalls = true;
      // What was already streamed stays said; only a continuation of it is added.
      if (whole.text.startsWith(text) && whole.text.length > text.length) yield { type: 'text', text: whole.text.slice(text.length) };
      calls = whole.calls;
      finishReason = whole.finishReason;
      usage = addUsage(usage, whole.usage);
    }
    yield* closingEvents(calls, usage, finishReason);
  }

  async complete(request: StructuredRequest): Promise<StructuredResult> {
    const { signal } = request;
    throwIfAborted(signal);
    for (let level = this.formatLevel; ; level = (level + 1) as ResponseFormatLevel) {
      let whole: ChatCompletion;
      try {
        whole = await this.client.complete(structuredBody(request, level), signal);
      } catch (err) {
        if (level < 2 && rejectsResponseFormat(err)) continue;
        throw err;
      }
      this.formatLevel = level;
      const answer = readCompletion(whole);
      const value = parseJsonAnswer(answer.text);
      if (!value) throw new ProviderApiError(OPENAI_PROVIDER, 'The model answered no JSON object', false);
      return { value, text: answer.text, ...(answer.usage ? { usage: answer.usage } : {}) };
    }
  }
}

function* closingEvents(calls: ToolCall[], usage: TokenUsage | undefined, finishReason: string | undefined): Generator<LanguageModelEvent> {
  for (const call of calls) yield { type: 'tool_call', call };
  if (usage) yield { type: 'usage', usage };
  yield { type: 'finish', reason: toFinishReason(finishReason, calls.length > 0) };
}

/** OpenAI's finish_reason in the port's terms; a server that says `stop` after tool calls meant `tool_calls`. */
export function toFinishReason(reason: string | undefined, hadToolCalls: boolean): FinishReason {
  if (hadToolCalls && (reason === undefined || reason === 'stop')) return 'tool_calls';
  switch (reason) {
    case undefined:
    case 'stop':
      return 'stop';
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    case 'length':
      return 'length';
    case 'content_filter':
      return 'content_filter';
    default:
      return 'other';
  }
}

/** The request body shared by streamed and whole answers (the client sets `stream`). */
export function chatBody(request: StreamRequest): Record<string, unknown> {
  const body: Record<string, unknown> = { model: request.model, messages: toWireMessages(request.messages) };
  if (request.tools && request.tools.length > 0) {
    body.tools = request.tools.map(toWireTool);
    body.tool_choice = 'auto';
  }
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens;
  return body;
}

function structuredBody(request: StructuredRequest, level: ResponseFormatLevel): Record<string, unknown> {
  const messages = toWireMessages(request.messages);
  const body: Record<string, unknown> = { model: request.model, messages };
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (level === 0) {
    body.response_format = { type: 'json_schema', json_schema: { name: schemaName(request.schema.name), strict: true, schema: request.schema.schema } };
  } else {
    // Without a schema-enforcing mode the model is told the schema (json_object also needs the word "JSON").
    messages.push({ role: 'system', content: `Answer with one JSON object that matches this JSON Schema, and nothing else: ${JSON.stringify(request.schema.schema)}` });
    if (level === 1) body.response_format = { type: 'json_object' };
  }
  return body;
}

/** OpenAI's pattern for a json_schema name: `^[a-zA-Z0-9_-]{1,64}$`. */
function schemaName(name: string): string {
  const cleaned = name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);
  return cleaned === '' ? 'answer' : cleaned;
}

function rejectsResponseFormat(err: unknown): boolean {
  return err instanceof OpenAiApiError && err.status === 400 && /response_format|json_schema|json_object/i.test(err.detail);
}

/** Callplane's messages in OpenAI's shape (assistant `tool_calls`, `tool` messages with `tool_call_id`). */
export function toWireMessages(messages: ChatMessage[]): Array<Record<string, unknown>> {
  return messages.map((m) => {
    switch (m.role) {
      case 'assistant': {
        if (!m.toolCalls || m.toolCalls.length === 0) return { role: 'assistant', content: m.content };
        return {
          role: 'assistant',
          content: m.content === '' ? null : m.content,
          tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
        };
      }
      case 'tool':
        return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
      default:
        return { role: m.role, content: m.content };
    }
  });
}

function toWireTool(tool: ToolSpec): Record<string, unknown> {
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } };
}

interface Answer {
  text: string;
  calls: ToolCall[];
  usage: TokenUsage | undefined;
  finishReason: string | undefined;
}

function readCompletion(whole: ChatCompletion): Answer {
  const choice = whole.choices?.[0];
  const message = choice?.message;
  const joiner = new ToolCallJoiner();
  (message?.tool_calls ?? []).forEach((c, index) => joiner.add({ ...c, index }));
  return {
    text: typeof message?.content === 'string' ? message.content : '',
    calls: joiner.calls(),
    usage: whole.usage ? toUsage(whole.usage) : undefined,
    finishReason: typeof choice?.finish_reason === 'string' ? choice.finish_reason : undefined,
  };
}

function toUsage(u: WireUsage): TokenUsage {
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);
  return { promptTokens: n(u.prompt_tokens), completionTokens: n(u.completion_tokens) };
}

function addUsage(a: TokenUsage | undefined, b: TokenUsage | undefined): TokenUsage | undefined {
  if (!a) return b;
  if (!b) return a;
  return { promptTokens: a.promptTokens + b.promptTokens, completionTokens: a.completionTokens + b.completionTokens };
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortError(signal.reason);
}
