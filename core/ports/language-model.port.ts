/**
 * A chat model the conversation engine talks to (API.md 13, docs/conversation.md). Adapters: the
 * OpenAI-compatible client (providers/openai) and, in tests, a scripted model (test/fakes). Every adapter
 * runs the shared contract suite in test/contracts/language-model.contract.ts.
 */
export const LanguageModel = Symbol.for('callplane.LanguageModel');

/** One message of the conversation as the model sees it. */
export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[] }
  | { role: 'tool'; toolCallId: string; content: string };

/** A function the model may call. `parameters` is a JSON Schema object (`{type: 'object', properties: {}}`). */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** A complete tool call: fragments already joined; `arguments` is the raw JSON text the model produced. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
}

export type FinishReason = 'stop' | 'tool_calls' | 'length' | 'content_filter' | 'other';

/**
 * What a stream yields, in order: any number of `text` deltas and `tool_call`s (each tool call once, whole,
 * when its fragments are complete), at most one `usage`, then exactly one `finish` as the last event.
 */
export type LanguageModelEvent =
  | { type: 'text'; text: string }
  | { type: 'tool_call'; call: ToolCall }
  | { type: 'usage'; usage: TokenUsage }
  | { type: 'finish'; reason: FinishReason };

export interface StreamRequest {
  /** The model name as the provider knows it (`gpt-4o-mini`). */
  model: string;
  messages: ChatMessage[];
  /** Offered tools; empty or absent: the model answers with text only. */
  tools?: ToolSpec[];
  temperature?: number;
  maxTokens?: number;
  /** Aborting ends the stream promptly: the iterator throws an `AbortError` (`err.name === 'AbortError'`). */
  signal?: AbortSignal;
}

export interface StructuredRequest {
  model: string;
  messages: ChatMessage[];
  /** The JSON Schema the answer must satisfy; `name` is a short identifier (`extraction`). */
  schema: { name: string; schema: Record<string, unknown> };
  temperature?: number;
  signal?: AbortSignal;
}

export interface StructuredResult {
  /** The parsed JSON object the model answered (tolerantly parsed where the server has no JSON mode). */
  value: Record<string, unknown>;
  /** The raw text of the answer. */
  text: string;
  usage?: TokenUsage;
}

export interface LanguageModel {
  /**
   * Streams one model response. Throws (from the iterator) `ProviderApiError` when the provider refuses or
   * fails, with the provider's message and never a secret; an `AbortError` when `signal` aborts. Not
   * idempotent: each call is one billed request.
   */
  stream(request: StreamRequest): AsyncIterable<LanguageModelEvent>;
  /**
   * One non-streamed answer parsed as a JSON object (extraction, classification). Throws `ProviderApiError`
   * when the provider fails or the answer holds no JSON object; an `AbortError` when `signal` aborts.
   */
  complete(request: StructuredRequest): Promise<StructuredResult>;
}
