/**
 * A fake OpenAI chat completions API on loopback, speaking the real wire format: `POST /v1/chat/completions`,
 * streamed as server-sent events (`data: {chat.completion.chunk}` lines, then `data: [DONE]`) or answered
 * whole (`chat.completion`), errors as `{error: {message, type, param, code}}`. Each request takes the next
 * scripted reply (`reply`), so a test decides word by word what the "model" says: text split into words, tool
 * calls with fragmented `arguments`, parallel calls with distinct indexes or all at `index: 0`, the usage chunk
 * (only when `stream_options.include_usage` asks for it), an `error` payload or a cut connection in the middle,
 * dropped streamed tool calls (as some Ollama versions do), delays. Server-wide behaviours: an API key to check,
 * response_format types to reject. Every request is recorded with its parsed body.
 */
import type http from 'node:http';
import { FakeHttpServer, parseJsonBody, readBody, sendJson } from '../fake-http-server.js';
import { FakeOpenAiSpeech, type FakeOpenAiSpeechOptions } from './fake-openai-speech.js';

export interface FakeOpenAiOptions {
  /** When set, requests must carry `Authorization: Bearer <apiKey>`; others get OpenAI's 401 (which echoes the key sent). */
  apiKey?: string;
  /** response_format types this "model" refuses with OpenAI's 400 naming `response_format`. */
  rejectResponseFormats?: Array<'json_schema' | 'json_object'>;
  /** The audio endpoints (`/v1/audio/transcriptions`, `/v1/audio/speech`): see fake-openai-speech.ts. */
  speech?: FakeOpenAiSpeechOptions;
}

export interface FakeToolCall {
  /** Default `call_<n>`. */
  id?: string;
  name: string;
  /** The raw JSON text of the arguments. */
  arguments: string;
}

/** What the "model" answers to one request (streamed or whole, as the request asks). */
export interface FakeChatReply {
  /** Streamed as one delta per word (each keeps its following space). */
  text?: string;
  toolCalls?: FakeToolCall[];
  /** Default `tool_calls` when there are tool calls, else `stop`. */
  finishReason?: string;
  /** Default: counted from the request and the answer; null: no usage at all. */
  usage?: { prompt_tokens: number; completion_tokens: number } | null;
  /** `zero`: every parallel call streams at `index: 0` (Ollama, some proxies). Default `distinct`. */
  toolCallIndexes?: 'distinct' | 'zero';
  /** Characters per streamed `arguments` fragment. Default 4. */
  argumentsFragment?: number;
  /** Streaming only: the tool_calls deltas are left out (finish_reason kept); a whole answer has them. */
  dropStreamedToolCalls?: boolean;
  /** Streaming only: after `afterEvents` data events, an `error` payload ends the stream (no [DONE]). */
  streamError?: { afterEvents: number; message: string; type?: string };
  /** Streaming only: after `afterEvents` data events the connection is destroyed. */
  cutAfterEvents?: number;
  /** Delay before the response headers (ms). */
  headersDelayMs?: number;
  /** Delay between streamed events (ms). */
  eventDelayMs?: number;
}

/** An HTTP error answer instead of a completion. */
export interface FakeChatFailure {
  status: number;
  error: { message: string; type?: string; code?: string | null; param?: string | null };
  headers?: Record<string, string>;
}

export interface RecordedOpenAiRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  body: Record<string, unknown> | null;
  /** `body.stream === true`. */
  stream: boolean;
  status: number;
  /** The client closed the connection before the whole answer was written. */
  closedEarly: boolean;
}

type Scripted = { kind: 'reply'; reply: FakeChatReply } | { kind: 'failure'; failure: FakeChatFailure };

export const FAKE_OPENAI_DEFAULT_TEXT = 'Hello from the fake model.';

export class FakeOpenAiServer extends FakeHttpServer<RecordedOpenAiRequest> {
  private readonly script: Scripted[] = [];
  /** Answers of structured requests (those with a `response_format`), taken before `script` while any is queued. */
  private readonly structuredScript: Scripted[] = [];
  private completions = 0;

  private constructor(private readonly opts: FakeOpenAiOptions) {
    super((err) => ({ error: { message: err.message, type: 'server_error', param: null, code: null } }));
  }

  /** Listening on loopback; `baseUrl` (`<url>/v1`) takes the place of https://api.openai.com/v1. */
  static async start(opts: FakeOpenAiOptions = {}): Promise<FakeOpenAiServer> {
    return new FakeOpenAiServer(opts).listen();
  }

  get baseUrl(): string {
    return `${this.url}/v1`;
  }

  /** Queues the answers of the next requests, in order. Unscripted requests answer `FAKE_OPENAI_DEFAULT_TEXT`. */
  reply(...replies: FakeChatReply[]): this {
    for (const reply of replies) this.script.push({ kind: 'reply', reply });
    return this;
  }

  /**
   * Queues the answers of the next structured requests (those carrying a `response_format`, as extraction sends),
   * apart from `reply`'s: a structured call running beside a streamed one then gets its own answer whichever
   * request arrives first.
   */
  replyStructured(...replies: FakeChatReply[]): this {
    for (const reply of replies) this.structuredScript.push({ kind: 'reply', reply });
    return this;
  }

  /** Queues an HTTP error answer (OpenAI's error body) in the script. */
  fail(failure: FakeChatFailure): this {
    this.script.push({ kind: 'failure', failure });
    return this;
  }

  /** The next `count` requests answer 429 with `Retry-After` (seconds), before any scripted reply. */
  rateLimitNext(count: number, retryAfterSeconds?: number): void {
    this.planRateLimits(count, retryAfterSeconds, () => errorBody('Rate limit reached for requests', 'requests', 'rate_limit_exceeded'));
  }

  /** The next `count` requests fail with `status` and OpenAI's error body, before any scripted reply. */
  failNext(count: number, status: number, message = 'The server had an error while processing your request.'): void {
    this.planFailures(count, status, () => errorBody(message, status >= 500 ? 'server_error' : 'invalid_request_error', null));
  }

  /** Scripted replies not yet taken (structured ones included). */
  get pending(): number {
    return this.script.length + this.structuredScript.length;
  }

  /** The audio endpoints: script transcripts, plan failures, read their requests here. */
  get speech(): FakeOpenAiSpeech {
    return (this.audio ??= new FakeOpenAiSpeech(this.opts.speech));
  }
  private audio: FakeOpenAiSpeech | undefined;

  protected async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (FakeOpenAiSpeech.handles(new URL(req.url ?? '/', 'http://fake').pathname)) return this.speech.handle(req, res, this.opts.apiKey);
    const text = await readBody(req);
    const body = parseJsonBody(text);
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    const entry: RecordedOpenAiRequest = {
      method: req.method ?? 'GET',
      path,
      authorization: req.headers.authorization,
      body,
      stream: body?.stream === true,
      status: 0,
      closedEarly: false,
    };
    res.on('close', () => {
      if (!res.writableFinished) entry.closedEarly = true;
    });
    const reply = this.log(res, entry);
    if (entry.method !== 'POST' || path !== '/v1/chat/completions') {
      return reply(404, errorBody(`Invalid URL (${entry.method} ${path})`, 'invalid_request_error', null));
    }
    if (this.opts.apiKey !== undefined && entry.authorization !== `Bearer ${this.opts.apiKey}`) {
      const sent = entry.authorization?.replace(/^Bearer /, '') ?? '';
      const message = sent
        ? `Incorrect API key provided: ${sent}. You can find your API key at https://platform.openai.com/account/api-keys.`
        : "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth.";
      return reply(401, errorBody(message, 'invalid_request_error', 'invalid_api_key'));
    }
    const planned = this.takePlanned(entry.method, path);
    if (planned) return reply(planned.status, planned.body, planned.headers);
    if (!body || typeof body.model !== 'string' || !Array.isArray(body.messages)) {
      return reply(400, errorBody("We could not parse the JSON body of your request: 'model' and 'messages' are required.", 'invalid_request_error', null));
    }
    const format = (body.response_format as { type?: unknown } | undefined)?.type;
    if (typeof format === 'string' && this.opts.rejectResponseFormats?.includes(format as 'json_schema')) {
      return reply(400, { error: { message: `Invalid parameter: 'response_format' of type '${format}' is not supported with this model.`, type: 'invalid_request_error', param: 'response_format', code: null } });
    }
    const queue = format !== undefined && this.structuredScript.length > 0 ? this.structuredScript : this.script;
    const next = queue.shift() ?? { kind: 'reply', reply: { text: FAKE_OPENAI_DEFAULT_TEXT } };
    if (next.kind === 'failure') return reply(next.failure.status, errorBody(next.failure.error.message, next.failure.error.type ?? 'invalid_request_error', next.failure.error.code ?? null, next.failure.error.param ?? null), next.failure.headers);
    const answer = next.reply;
    const id = `chatcmpl-fake${++this.completions}`;
    if (answer.headersDelayMs) await waitUnlessClosed(res, answer.headersDelayMs);
    if (res.destroyed) return;
    if (!entry.stream) {
      entry.status = 200;
      return sendJson(res, 200, wholeCompletion(id, body, answer));
    }
    entry.status = 200;
    await this.streamAnswer(res, id, body, answer);
  }

  private async streamAnswer(res: http.ServerResponse, id: string, body: Record<string, unknown>, answer: FakeChatReply): Promise<void> {
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
    const created = Math.floor(Date.now() / 1000);
    const chunk = (choices: unknown[], usage?: unknown) => ({
      id,
      object: 'chat.completion.chunk',
      created,
      model: body.model,
      system_fingerprint: 'fp_fake',
      choices,
      ...(usage !== undefined ? { usage } : {}),
    });
    const delta = (d: Record<string, unknown>, finish: string | null = null) => chunk([{ index: 0, delta: d, logprobs: null, finish_reason: finish }]);

    const events: unknown[] = [delta({ role: 'assistant', content: '' })];
    for (const word of words(answer.text ?? '')) events.push(delta({ content: word }));
    if (!answer.dropStreamedToolCalls) {
      const size = Math.max(1, answer.argumentsFragment ?? 4);
      (answer.toolCalls ?? []).forEach((call, n) => {
        const index = answer.toolCallIndexes === 'zero' ? 0 : n;
        events.push(delta({ tool_calls: [{ index, id: call.id ?? `call_${n}`, type: 'function', function: { name: call.name, arguments: '' } }] }));
        for (let i = 0; i < call.arguments.length; i += size) {
          events.push(delta({ tool_calls: [{ index, function: { arguments: call.arguments.slice(i, i + size) } }] }));
        }
      });
    }
    events.push(delta({}, finishReasonOf(answer)));
    const streamOptions = body.stream_options as { include_usage?: unknown } | undefined;
    const usage = usageOf(body, answer);
    if (streamOptions?.include_usage === true && usage) events.push(chunk([], usage));

    for (let sent = 0; sent <= events.length; sent++) {
      if (answer.streamError && sent === answer.streamError.afterEvents) {
        res.end(`data: ${JSON.stringify({ error: { message: answer.streamError.message, type: answer.streamError.type ?? 'server_error', param: null, code: null } })}\n\n`);
        return;
      }
      if (answer.cutAfterEvents !== undefined && sent === answer.cutAfterEvents) {
        // FIN after what was written, mid chunked body: the client sees the connection end before the answer did.
        res.socket?.destroySoon();
        return;
      }
      if (sent === events.length) break;
      if (answer.eventDelayMs && sent > 0) await waitUnlessClosed(res, answer.eventDelayMs);
      if (res.destroyed) return;
      await new Promise<void>((resolve) => res.write(`data: ${JSON.stringify(events[sent])}\n\n`, () => resolve()));
    }
    res.end('data: [DONE]\n\n');
  }
}

function errorBody(message: string, type: string, code: string | null, param: string | null = null): unknown {
  return { error: { message, type, param, code } };
}

/** Words with their following whitespace, so the deltas join back into the text. */
function words(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

function finishReasonOf(answer: FakeChatReply): string {
  return answer.finishReason ?? ((answer.toolCalls?.length ?? 0) > 0 ? 'tool_calls' : 'stop');
}

function usageOf(body: Record<string, unknown>, answer: FakeChatReply): { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null {
  if (answer.usage === null) return null;
  const prompt = answer.usage?.prompt_tokens ?? Math.ceil(JSON.stringify(body.messages).length / 4);
  const completion = answer.usage?.completion_tokens ?? words(answer.text ?? '').length + (answer.toolCalls?.length ?? 0) * 5;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

function wholeCompletion(id: string, body: Record<string, unknown>, answer: FakeChatReply): unknown {
  const calls = answer.toolCalls ?? [];
  const usage = usageOf(body, answer);
  return {
    id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    system_fingerprint: 'fp_fake',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: answer.text ?? null,
          ...(calls.length > 0 ? { tool_calls: calls.map((c, n) => ({ id: c.id ?? `call_${n}`, type: 'function', function: { name: c.name, arguments: c.arguments } })) } : {}),
          refusal: null,
        },
        logprobs: null,
        finish_reason: finishReasonOf(answer),
      },
    ],
    ...(usage ? { usage } : {}),
  };
}

/** Waits `ms`, or less when the client goes away (so closing the fake never waits on a timer). */
function waitUnlessClosed(res: http.ServerResponse, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      res.off('close', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    res.on('close', done);
  });
}
