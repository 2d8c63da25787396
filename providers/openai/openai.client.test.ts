import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { ProviderApiError } from '../../core/errors.js';
import { policyFetch } from '../../plugins/sdk.js';
import { FakeOpenAiServer } from '../../test/fakes/openai/fake-openai-server.js';
import { OpenAiApiError, OpenAiClient, type ChatCompletionChunk, type OpenAiClientOptions } from './openai.client.js';

const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] };

async function chunks(client: OpenAiClient, signal?: AbortSignal): Promise<ChatCompletionChunk[]> {
  const out: ChatCompletionChunk[] = [];
  for await (const c of client.stream(body, signal)) out.push(c);
  return out;
}

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

describe('OpenAiClient (transport rules)', () => {
  let fake: FakeOpenAiServer;
  const client = (opts: Partial<OpenAiClientOptions> = {}) => new OpenAiClient({ baseUrl: fake.baseUrl, retryBaseDelayMs: 10, ...opts });

  beforeEach(async () => {
    fake = await FakeOpenAiServer.start();
  });
  afterEach(async () => {
    await fake.close();
  });

  it('posts to <base_url>/chat/completions (trailing slash tolerated) with a Bearer key only when one is set', async () => {
    await client({ apiKey: 'sk-test-123', baseUrl: `${fake.baseUrl}/` }).complete(body);
    await client().complete(body);
    expect(fake.requests.map((r) => [r.path, r.authorization])).toEqual([
      ['/v1/chat/completions', 'Bearer sk-test-123'],
      ['/v1/chat/completions', undefined],
    ]);
    expect(fake.requests[0]?.body).toMatchObject({ ...body, stream: false });
  });

  it('retries 429 honouring Retry-After, then succeeds', async () => {
    fake.rateLimitNext(1, 1);
    const started = Date.now();
    const got = await chunks(client({ retryBaseDelayMs: 1 }));
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(got.length).toBeGreaterThan(0);
    expect(fake.requests.map((r) => r.status)).toEqual([429, 200]);
  });

  it("prefers OpenAI's retry-after-ms header", async () => {
    fake.fail({ status: 429, error: { message: 'Rate limit reached', type: 'requests' }, headers: { 'retry-after-ms': '300', 'retry-after': '5' } });
    const started = Date.now();
    await client({ retryBaseDelayMs: 5_000 }).complete(body);
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(280);
    expect(took).toBeLessThan(2_000);
    expect(fake.requests.map((r) => r.status)).toEqual([429, 200]);
  });

  it('retries 5xx with backoff up to maxRetries, then fails with the server message, retryable', async () => {
    fake.failNext(3, 500, 'The server had an error while processing your request.');
    const err = await rejection(chunks(client({ maxRetries: 2 })));
    expect(err).toBeInstanceOf(ProviderApiError);
    expect(err).toMatchObject({ provider: 'openai', detail: 'The server had an error while processing your request.', retryable: true, status: 500 });
    expect(fake.requests).toHaveLength(3);
  });

  it('does not retry a 4xx other than 429', async () => {
    fake.fail({ status: 400, error: { message: "Invalid value for 'temperature'.", type: 'invalid_request_error' } });
    const err = await rejection(client().complete(body));
    expect(err).toMatchObject({ detail: "Invalid value for 'temperature'.", retryable: false, status: 400 });
    expect(fake.requests).toHaveLength(1);
  });

  it('never repeats a stream that already yielded: a cut connection after the first event is one failed request', async () => {
    fake.reply({ text: 'one two three four', cutAfterEvents: 2 });
    const seen: ChatCompletionChunk[] = [];
    const err = await rejection(
      (async () => {
        for await (const c of client().stream(body)) seen.push(c);
      })(),
    );
    expect(seen).toHaveLength(2);
    expect(err).toBeInstanceOf(ProviderApiError);
    expect(err.message).toMatch(/connection was cut/);
    expect(fake.requests).toHaveLength(1);
  });

  it('closes the connection when the caller stops reading a stream', async () => {
    fake.reply({ text: 'a b c d e f g h i j', eventDelayMs: 100 });
    for await (const c of client().stream(body)) if (c.choices?.[0]?.delta?.content) break;
    await new Promise((r) => setTimeout(r, 50));
    expect(fake.requests[0]?.closedEarly).toBe(true);
  });

  it('turns an error payload in the middle of a stream into ProviderApiError with its message', async () => {
    fake.reply({ text: 'one two three', streamError: { afterEvents: 2, message: 'The model is overloaded.', type: 'server_error' } });
    const err = await rejection(chunks(client()));
    expect(err).toMatchObject({ provider: 'openai', detail: 'The model is overloaded.', retryable: true });
    expect(fake.requests).toHaveLength(1);
  });

  it('maps a 401 to the server message without the api key it echoes', async () => {
    await fake.close();
    fake = await FakeOpenAiServer.start({ apiKey: 'sk-right' });
    const err = await rejection(client({ apiKey: 'sk-wrong-secret-987' }).complete(body));
    expect(err).toBeInstanceOf(ProviderApiError);
    expect((err as OpenAiApiError).status).toBe(401);
    expect(err.message).toMatch(/^Incorrect API key provided: \*\*\*\./);
    expect(JSON.stringify({ ...err, message: err.message, stack: err.stack })).not.toContain('sk-wrong-secret-987');
  });

  it('says HTTP <status> when the error body is not OpenAI-shaped', async () => {
    const server = http.createServer((_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html>Bad gateway</html>');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
      const err = await rejection(new OpenAiClient({ baseUrl: url, maxRetries: 0 }).complete(body));
      expect(err).toMatchObject({ detail: 'The OpenAI-compatible server answered HTTP 502', retryable: true });
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('never follows a redirect (redirect: manual; a 3xx is an error)', async () => {
    const server = http.createServer((_req, res) => {
      res.writeHead(302, { location: fake.baseUrl + '/chat/completions' });
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
      const err = await rejection(new OpenAiClient({ baseUrl: url }).complete(body));
      expect(err).toMatchObject({ status: 302, retryable: false });
      expect(err.message).toMatch(/redirect/);
      expect(fake.requests).toHaveLength(0);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('sends every request through the injected fetch (how the network policy applies), with redirect manual', async () => {
    const seen: RequestInit[] = [];
    const policyFetch: typeof fetch = (input, init) => {
      seen.push(init ?? {});
      return fetch(input, init);
    };
    await chunks(client({ fetch: policyFetch }));
    await client({ fetch: policyFetch }).complete(body);
    expect(seen.map((i) => i.redirect)).toEqual(['manual', 'manual']);
  });

  it('passes on a ProviderApiError the injected fetch throws (a refused base_url), without retrying', async () => {
    let calls = 0;
    const refusing: typeof fetch = async () => {
      calls++;
      throw new ProviderApiError('openai', 'base_url refused: 169.254.169.254 is a cloud-metadata address', false);
    };
    const err = await rejection(client({ fetch: refusing }).complete(body));
    expect(err.message).toBe('base_url refused: 169.254.169.254 is a cloud-metadata address');
    expect(calls).toBe(1);
  });

  describe("through the host's network policy fetch", () => {
    const viaPolicy = (allowPrivateNetwork: boolean): typeof fetch =>
      ((input: string | URL, init: RequestInit = {}) =>
        policyFetch(String(input), { method: init.method, headers: init.headers as Record<string, string>, body: init.body as string, signal: init.signal ?? null }, {
          allowPrivateNetwork,
          field: 'base_url',
          label: 'AI service base_url',
        })) as typeof fetch;

    it('streams, stops on abort and closes the connection', async () => {
      fake.reply({ text: 'one two three' }, { text: 'a b c d e f', eventDelayMs: 200 });
      const got = await chunks(client({ fetch: viaPolicy(true) }));
      expect(got.flatMap((c) => c.choices?.[0]?.delta?.content ?? []).join('')).toBe('one two three');
      const a = new AbortController();
      const err = await rejection(
        (async () => {
          for await (const c of client({ fetch: viaPolicy(true) }).stream(body, a.signal)) if (c.choices?.[0]?.delta?.content) a.abort();
        })(),
      );
      expect(err).toMatchObject({ name: 'AbortError' });
      await new Promise((r) => setTimeout(r, 50));
      expect(fake.requests[1]?.closedEarly).toBe(true);
    });

    it('aborts the request of a consumer that stops early, and leaves one whose answer was read to its end alone', async () => {
      fake.reply({ text: 'one two three' }, { text: 'four five six' }, { text: 'seven eight nine', eventDelayMs: 100 });
      const signals: AbortSignal[] = [];
      const spying = ((input: string | URL, init: RequestInit = {}) => {
        signals.push(init.signal!);
        return viaPolicy(true)(input, init);
      }) as typeof fetch;
      await chunks(client({ fetch: spying }));
      await client({ fetch: spying }).complete(body);
      for await (const c of client({ fetch: spying }).stream(body)) if (c.choices?.[0]?.delta?.content) break;
      expect(signals.map((s) => s.aborted)).toEqual([false, false, true]);
      await new Promise((r) => setTimeout(r, 50));
      expect(fake.requests[2]?.closedEarly).toBe(true);
    });

    it("reports a refused base_url with the policy's message, not retryable", async () => {
      const err = await rejection(client({ fetch: viaPolicy(false) }).complete(body));
      expect(err).toBeInstanceOf(ProviderApiError);
      expect(err).toMatchObject({ retryable: false });
      expect(err.message).toBe('base_url points at a private or loopback address, which this server does not allow (CALLPLANE_ALLOW_PRIVATE_NETWORK)');
      expect(fake.requests).toHaveLength(0);
    });
  });

  it('reports an unreachable server as a retryable ProviderApiError', async () => {
    const url = fake.baseUrl;
    await fake.close();
    const err = await rejection(new OpenAiClient({ baseUrl: url }).complete(body));
    expect(err).toMatchObject({ provider: 'openai', retryable: true });
    expect(err.message).toMatch(/could not be reached \(ECONNREFUSED\)/);
    fake = await FakeOpenAiServer.start();
  });

  it('fails a stream whose first event does not come within firstTokenTimeoutMs', async () => {
    fake.reply({ text: 'late', headersDelayMs: 5_000 });
    const started = Date.now();
    const err = await rejection(chunks(client({ firstTokenTimeoutMs: 200 })));
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(err).toMatchObject({ provider: 'openai', detail: 'The OpenAI-compatible server sent nothing within 200 ms', retryable: true });
  });

  it('fails a stream that is still going after timeoutMs, even when events keep coming', async () => {
    fake.reply({ text: 'a b c d e f g h i j k l m n o p', eventDelayMs: 100 });
    const err = await rejection(chunks(client({ timeoutMs: 400 })));
    expect(err).toMatchObject({ detail: 'The OpenAI-compatible server did not finish within 400 ms', retryable: true });
  });

  it('fails a whole answer that does not come within timeoutMs', async () => {
    fake.reply({ text: '{}', headersDelayMs: 5_000 });
    const err = await rejection(client({ timeoutMs: 200 }).complete(body));
    expect(err).toMatchObject({ detail: 'The OpenAI-compatible server did not finish within 200 ms' });
  });

  it('does not wait for a Retry-After longer than the time left', async () => {
    fake.rateLimitNext(1, 30);
    const started = Date.now();
    const err = await rejection(client({ timeoutMs: 1_000 }).complete(body));
    expect(Date.now() - started).toBeLessThan(900);
    expect(err).toMatchObject({ status: 429, retryable: true });
  });

  it('ends with an AbortError when the caller aborts: waiting for the answer, between events, or while waiting to retry', async () => {
    fake.reply({ text: 'x', headersDelayMs: 5_000 });
    const a = new AbortController();
    setTimeout(() => a.abort(), 50);
    expect(await rejection(client().complete(body, a.signal))).toMatchObject({ name: 'AbortError' });

    fake.reply({ text: 'a b c d e f g', eventDelayMs: 200 });
    const b = new AbortController();
    const err = await rejection(
      (async () => {
        for await (const c of client().stream(body, b.signal)) if (c.choices?.[0]?.delta?.content) b.abort();
      })(),
    );
    expect(err).toMatchObject({ name: 'AbortError' });

    fake.rateLimitNext(1, 20);
    const c = new AbortController();
    setTimeout(() => c.abort(), 100);
    const started = Date.now();
    expect(await rejection(client().complete(body, c.signal))).toMatchObject({ name: 'AbortError' });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('keeps the caller abort reason when it is an AbortError already', async () => {
    const reason = new DOMException('caller hung up', 'AbortError');
    const err = await rejection(client().complete(body, AbortSignal.abort(reason)));
    expect(err).toBe(reason);
  });

  it('reads a last event the server did not end with a blank line', async () => {
    const finish = { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] };
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'Hi' }, finish_reason: null }] })}\n\ndata: ${JSON.stringify(finish)}\n`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
      const got = await chunks(new OpenAiClient({ baseUrl: url }));
      expect(got.at(-1)).toEqual(finish);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('fails a stream that ends without a finish reason or [DONE]', async () => {
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'Hel' }, finish_reason: null }] })}\n\n`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
      const err = await rejection(chunks(new OpenAiClient({ baseUrl: url })));
      expect(err).toMatchObject({ detail: 'The OpenAI-compatible server ended the stream before the answer was complete' });
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
