/**
 * The only code that talks HTTP to an OpenAI-compatible server (OpenAI, vLLM, Ollama, llama.cpp, Groq, ...):
 * `POST <base_url>/chat/completions` over `fetch`, streamed as server-sent events or answered whole. The
 * language model adapter (openai-language-model.ts) builds the bodies and reads the chunks; this file owns the
 * transport rules (docs/providers.md, "OpenAI and compatible servers"):
 *
 * - `Authorization: Bearer <api_key>` only when a key is set; the key never appears in an error.
 * - `redirect: 'manual'`: a 3xx answer is an error, never followed (the SSRF policy lives in the injected fetch).
 * - 429 and 5xx answers are retried with backoff (or the server's `retry-after-ms`/`Retry-After`) while
 *   nothing has been yielded yet; a stream that fails after its first event is never repeated.
 * - Timeouts: `firstTokenTimeoutMs` from sending a streamed request to its first event (connect included);
 *   `timeoutMs` for the whole call, retries and waits included. Both fail with a retryable ProviderApiError.
 * - The caller's AbortSignal ends the call promptly with an `AbortError`.
 * - Errors: `ProviderApiError('openai', <the server's error.message>, retryable)`; an `error` payload or a cut
 *   connection in the middle of a stream is one too.
 */
import { createParser } from 'eventsource-parser';
import { abortError, NetworkPolicyError, ProviderApiError, retryDelayMs } from '../../plugins/sdk.js';

export const OPENAI_PROVIDER = 'openai';
export const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';

export interface OpenAiClientOptions {
  /** Sent as a Bearer token when set (local servers often need none). */
  apiKey?: string;
  /** The service's `base_url`, e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`. */
  baseUrl: string;
  /** The fetch that enforces the network policy; the global fetch when absent. */
  fetch?: typeof fetch;
  /** Bound of one whole call: connect, retries, waits and the entire stream (ms). Default 120 000. */
  timeoutMs?: number;
  /** From sending a streamed request to its first event, retries included (ms). Default 30 000, never above `timeoutMs`. */
  firstTokenTimeoutMs?: number;
  /** Retries after a 429 or 5xx answer. Default 2. */
  maxRetries?: number;
  /** First backoff delay when the server sends no Retry-After (ms). Default 500. */
  retryBaseDelayMs?: number;
  /** Upper bound of one wait between retries (ms). Default 10 000. */
  maxRetryDelayMs?: number;
}

/** A failed answer of the server; `status` is the HTTP status when there was one (absent mid-stream). */
export class OpenAiApiError extends ProviderApiError {
  constructor(
    detail: string,
    retryable: boolean,
    readonly status?: number,
  ) {
    super(OPENAI_PROVIDER, detail, retryable);
  }
}

/** The JSON of one SSE `data:` line of a streamed chat completion (only the members Callplane reads). */
export interface ChatCompletionChunk {
  choices?: Array<{
    index?: number;
    delta?: {
      content?: string | null;
      tool_calls?: Array<{ index?: number; id?: string; type?: string; function?: { name?: string; arguments?: string } }>;
    };
    finish_reason?: string | null;
  }>;
  usage?: WireUsage | null;
}

export interface WireUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
}

/** A whole (non-streamed) chat completion. */
export interface ChatCompletion {
  choices?: Array<{
    message?: {
      content?: string | null;
      tool_calls?: Array<{ id?: string; type?: string; function?: { name?: string; arguments?: string } }>;
    };
    finish_reason?: string | null;
  }>;
  usage?: WireUsage | null;
}

/** Why a request stopped early: the caller's abort, or one of our timers. */
type StopCause = { kind: 'abort'; reason: unknown } | { kind: 'timeout'; what: 'first' | 'overall'; ms: number };

export class OpenAiClient {
  private readonly url: string;
  private readonly fetchImpl: typeof fetch;
  private readonly timeoutMs: number;
  private readonly firstTokenTimeoutMs: number;
  private readonly maxRetries: number;

  constructor(private readonly opts: OpenAiClientOptions) {
    this.url = `${(opts.baseUrl || DEFAULT_OPENAI_BASE_URL).replace(/\/+$/, '')}/chat/completions`;
    this.fetchImpl = opts.fetch ?? fetch;
    this.timeoutMs = opts.timeoutMs ?? 120_000;
    this.firstTokenTimeoutMs = Math.min(opts.firstTokenTimeoutMs ?? 30_000, this.timeoutMs);
    this.maxRetries = Math.max(0, opts.maxRetries ?? 2);
  }

  /** One whole chat completion (`stream: false` is set here). */
  async complete(body: Record<string, unknown>, signal?: AbortSignal): Promise<ChatCompletion> {
    const call = new CallControl(signal, this.timeoutMs);
    try {
      const res = await this.send({ ...body, stream: false }, call, false);
      let text: string;
      try {
        text = await res.text();
      } catch (err) {
        throw this.failure(err, call, 'the connection was cut before the answer arrived');
      }
      call.answered = true;
      const parsed = parseJson(text);
      if (!isObject(parsed)) throw new OpenAiApiError(`The OpenAI-compatible server returned an unreadable answer (HTTP ${res.status})`, true, res.status);
      if (isObject(parsed.error)) throw this.payloadError(parsed.error);
      return parsed as ChatCompletion;
    } finally {
      call.dispose();
    }
  }

  /**
   * A streamed chat completion (`stream: true` is set here): yields each chunk's JSON until `[DONE]` (or the
   * end of a body that sent a finish reason). Breaking out of the loop closes the connection.
   */
  async *stream(body: Record<string, unknown>, signal?: AbortSignal): AsyncGenerator<ChatCompletionChunk> {
    const call = new CallControl(signal, this.timeoutMs);
    try {
      const first = call.startTimer({ kind: 'timeout', what: 'first', ms: this.firstTokenTimeoutMs });
      const res = await this.send({ ...body, stream: true }, call, true);
      const reader = res.body?.getReader();
      if (!reader) throw new OpenAiApiError('The OpenAI-compatible server answered without a body', true, res.status);
      const decoder = new TextDecoder();
      const events: string[] = [];
      const parser = createParser({ onEvent: (e) => events.push(e.data) });
      let finished = false;
      try {
        for (;;) {
          let chunk: Awaited<ReturnType<typeof reader.read>>;
          try {
            chunk = await call.race(reader.read());
          } catch (err) {
            throw this.failure(err, call, 'the connection was cut in the middle of the answer');
          }
          if (chunk.done) {
            // A last event the server did not end with a blank line still counts (SSE would drop it).
            parser.feed(`${decoder.decode()}\n\n`);
          } else {
            parser.feed(decoder.decode(chunk.value, { stream: true }));
          }
          while (events.length > 0) {
            const data = (events.shift() ?? '').trim();
            if (data === '') continue;
            clearTimeout(first);
            if (data === '[DONE]') {
              call.answered = true;
              return;
            }
            const parsed = parseJson(data);
            if (!isObject(parsed)) throw new OpenAiApiError('The OpenAI-compatible server sent an unreadable stream event', true);
            if (isObject(parsed.error)) throw this.payloadError(parsed.error);
            const choices = (parsed as ChatCompletionChunk).choices;
            if (Array.isArray(choices) && choices.some((c) => typeof c?.finish_reason === 'string' && c.finish_reason !== '')) finished = true;
            yield parsed as ChatCompletionChunk;
          }
          if (chunk.done) {
            call.answered = true;
            break;
          }
        }
        if (!finished) throw new OpenAiApiError('The OpenAI-compatible server ended the stream before the answer was complete', true);
      } finally {
        await reader.cancel().catch(() => undefined);
      }
    } finally {
      call.dispose();
    }
  }

  /** Sends the request, retrying 429/5xx; answers a 2xx response or throws. */
  private async send(body: Record<string, unknown>, call: CallControl, streaming: boolean): Promise<Response> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: streaming ? 'text/event-stream' : 'application/json',
    };
    if (this.opts.apiKey) headers.authorization = `Bearer ${this.opts.apiKey}`;
    const payload = JSON.stringify(body);
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await call.race(this.fetchImpl(this.url, { method: 'POST', headers, body: payload, redirect: 'manual', signal: call.signal }));
      } catch (err) {
        throw this.failure(err, call, 'the server could not be reached');
      }
      if (res.ok) return res;
      const text = await call.race(res.text()).catch(() => '');
      if (call.stopped) throw this.failure(undefined, call, 'reading an error answer');
      const error = this.statusError(res, text);
      if (error.retryable && attempt < this.maxRetries) {
        const wait = this.retryWaitMs(attempt, res.headers);
        if (wait <= call.remainingMs()) {
          await call.sleep(wait).catch((err: unknown) => {
            throw this.failure(err, call, 'waiting to retry');
          });
          continue;
        }
      }
      throw error;
    }
  }

  /** OpenAI's `retry-after-ms` when sent, else `Retry-After` or the backoff; capped by `maxRetryDelayMs`. */
  private retryWaitMs(attempt: number, headers: Headers): number {
    const ms = Number(headers.get('retry-after-ms') ?? NaN);
    if (Number.isFinite(ms) && ms >= 0) return Math.min(ms, this.opts.maxRetryDelayMs ?? 10_000);
    return retryDelayMs(attempt, headers.get('retry-after'), this.opts);
  }

  private statusError(res: Response, text: string): OpenAiApiError {
    const status = res.status;
    if (status >= 300 && status < 400) {
      return new OpenAiApiError(`The OpenAI-compatible server answered with a redirect (HTTP ${status}), which is not followed; check base_url`, false, status);
    }
    const parsed = parseJson(text);
    const message = isObject(parsed) ? errorMessage(parsed.error) ?? errorMessage(parsed) : undefined;
    const retryable = status === 429 || status >= 500;
    return new OpenAiApiError(message ? this.redact(message) : `The OpenAI-compatible server answered HTTP ${status}`, retryable, status);
  }

  private payloadError(error: Record<string, unknown>): OpenAiApiError {
    const message = errorMessage(error);
    const type = typeof error.type === 'string' ? error.type : '';
    const retryable = /server_error|overloaded|rate_limit|timeout/i.test(type);
    return new OpenAiApiError(message ? this.redact(message) : 'The OpenAI-compatible server reported an error in the middle of the answer', retryable);
  }

  /** What a thrown fetch/read error becomes: the caller's AbortError, a timeout, or an unreachable server. */
  private failure(err: unknown, call: CallControl, what: string): Error {
    const stopped = call.stopped;
    if (stopped?.kind === 'abort') return abortError(stopped.reason);
    if (stopped?.kind === 'timeout') {
      const detail = stopped.what === 'first' ? `sent nothing within ${stopped.ms} ms` : `did not finish within ${stopped.ms} ms`;
      return new OpenAiApiError(`The OpenAI-compatible server ${detail}`, true);
    }
    if (err instanceof ProviderApiError) return err;
    // The policy fetch refused the base_url (an address, a redirect): its message is written for the user.
    if (err instanceof NetworkPolicyError) return new OpenAiApiError(err.message, false);
    const cause = (err as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
    const reason = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : err instanceof Error ? err.message : 'network error';
    return new OpenAiApiError(`OpenAI-compatible server request failed: ${what} (${this.redact(reason)})`, true);
  }

  /** The message without the api key, whatever the server chose to echo. */
  private redact(message: string): string {
    const key = this.opts.apiKey;
    return key ? message.split(key).join('***') : message;
  }
}

function errorMessage(error: unknown): string | undefined {
  if (typeof error === 'string' && error.trim() !== '') return error.trim();
  if (isObject(error) && typeof error.message === 'string' && error.message.trim() !== '') return error.message.trim();
  return undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * One call's stop conditions: the caller's signal, the overall timeout and any timer started with
 * `startTimer`. `signal` aborts the fetch; `race` makes any awaited step end as soon as the call stops.
 */
class CallControl {
  private readonly controller = new AbortController();
  private readonly timers: ReturnType<typeof setTimeout>[] = [];
  private readonly deadline: number;
  private readonly onCallerAbort: () => void;
  private readonly stoppedPromise: Promise<never>;
  private rejectStopped!: (err: unknown) => void;
  stopped: StopCause | undefined;
  /** The whole answer was read: nothing is left to abort when the call is disposed. */
  answered = false;

  constructor(
    private readonly caller: AbortSignal | undefined,
    timeoutMs: number,
  ) {
    this.deadline = Date.now() + timeoutMs;
    this.stoppedPromise = new Promise<never>((_, reject) => {
      this.rejectStopped = reject;
    });
    this.stoppedPromise.catch(() => undefined);
    this.onCallerAbort = () => this.stop({ kind: 'abort', reason: caller?.reason });
    if (caller?.aborted) this.onCallerAbort();
    else caller?.addEventListener('abort', this.onCallerAbort, { once: true });
    this.startTimer({ kind: 'timeout', what: 'overall', ms: timeoutMs });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  remainingMs(): number {
    return this.deadline - Date.now();
  }

  startTimer(cause: StopCause & { kind: 'timeout' }): ReturnType<typeof setTimeout> {
    const t = setTimeout(() => this.stop(cause), cause.ms);
    this.timers.push(t);
    return t;
  }

  race<T>(p: Promise<T>): Promise<T> {
    return Promise.race([p, this.stoppedPromise]);
  }

  sleep(ms: number): Promise<void> {
    return this.race(new Promise<void>((resolve) => this.timers.push(setTimeout(resolve, ms))));
  }

  /**
   * Clears the timers and the caller's listener; aborts the request unless its answer was read to the end (an
   * abort then has nothing to stop, and its AbortError cost ~50 µs per call).
   */
  dispose(): void {
    for (const t of this.timers) clearTimeout(t);
    this.caller?.removeEventListener('abort', this.onCallerAbort);
    if (!this.answered && !this.controller.signal.aborted) this.controller.abort();
  }

  private stop(cause: StopCause): void {
    if (this.stopped) return;
    this.stopped = cause;
    const err = cause.kind === 'abort' ? abortError(cause.reason) : new Error('stopped');
    this.rejectStopped(err);
    this.controller.abort(err);
  }
}
