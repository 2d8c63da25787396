import { describe, expect, it } from '@jest/globals';
import { ForbiddenError, NotFoundError } from '../errors.js';
import { silentLogger } from '../ports/logger.port.js';
import type { ProviderMarkup, ProviderPlugin, TelephonyProvider, WebhookRequest } from '../ports/telephony-provider.port.js';
import type { Run } from '../runs/run.js';
import type { TelephonyConfiguration } from '../telephony/telephony-configuration.js';
import { AnswerOutboundCall } from './answer-outbound-call.use-case.js';
import { CallUrls } from './call-urls.js';

const PUBLIC = 'https://cp.example.test/';

function setup(opts: { answering?: boolean; validSignature?: boolean } = {}) {
  const calls: Array<{ request: WebhookRequest; ctx: { runId: number; mediaUrl: string; statusCallbackUrl: string } }> = [];
  const verified: WebhookRequest[] = [];
  const connecting: number[] = [];
  const instance = {
    verifyWebhook: (r: WebhookRequest) => {
      verified.push(r);
      return opts.validSignature ?? true;
    },
    ...(opts.answering === false
      ? {}
      : {
          answerOutbound: (request: WebhookRequest, ctx: { runId: number; mediaUrl: string; statusCallbackUrl: string }): ProviderMarkup => {
            calls.push({ request, ctx });
            return { contentType: 'text/xml', body: `<Response run="${ctx.runId}"/>` };
          },
        }),
  } as unknown as TelephonyProvider;
  const runs = new Map<number, Partial<Run>>([
    [1, { id: 1, provider: 'acme', telephonyConfigurationId: 10 }],
    [2, { id: 2, provider: 'other', telephonyConfigurationId: 20 }],
    [3, { id: 3, provider: 'acme', telephonyConfigurationId: null }],
    [4, { id: 4, provider: 'acme', telephonyConfigurationId: 20 }],
  ]);
  const configurations = new Map<number, Partial<TelephonyConfiguration>>([
    [10, { id: 10, provider: 'acme' }],
    [20, { id: 20, provider: 'other' }],
  ]);
  const catalog = { ids: () => ['acme', 'other'], get: (id: string) => (['acme', 'other'].includes(id) ? ({} as ProviderPlugin) : null), validateConfig: () => ({ ok: false as const, issues: [] }) };
  const useCase = new AnswerOutboundCall(
    catalog,
    { findForProviderEvent: async (id: number) => (runs.get(id) as Run) ?? null },
    { findForProviderEvent: async (id: number) => (configurations.get(id) as TelephonyConfiguration) ?? null },
    { forConfiguration: (c: TelephonyConfiguration) => (c.id === 10 ? instance : ({} as TelephonyProvider)) },
    new CallUrls(PUBLIC, { signUrl: (p: string, runId: number, url: string) => `${url}?token=${p}.${runId}` }),
    silentLogger,
    { callConnecting: (run: Run) => connecting.push(run.id) },
  );
  return { useCase, calls, verified, connecting };
}

const request: WebhookRequest = { publicUrl: `${PUBLIC}api/v1/telephony/acme/answer/1`, method: 'POST', headers: { 'x-sig': 's' }, body: { CallUUID: 'u1' }, query: {} };

describe('AnswerOutboundCall', () => {
  it('tells the listeners the call is connecting (its greeting is prepared), only for a verified request', async () => {
    const { useCase, connecting } = setup();
    await useCase.execute('acme', 1, request);
    expect(connecting).toEqual([1]);
    const refused = setup({ validSignature: false });
    await expect(refused.useCase.execute('acme', 1, request)).rejects.toBeInstanceOf(ForbiddenError);
    expect(refused.connecting).toEqual([]);
  });

  it("answers the provider's markup with the run's signed media URL and status URL, after verifying the signature", async () => {
    const { useCase, calls, verified } = setup();
    const markup = await useCase.execute('acme', 1, request);
    expect(markup).toEqual({ contentType: 'text/xml', body: '<Response run="1"/>' });
    expect(verified).toEqual([{ ...request, runId: 1 }]);
    expect(calls).toEqual([{
      request: { ...request, runId: 1 },
      ctx: {
        runId: 1,
        mediaUrl: 'wss://cp.example.test/api/v1/telephony/acme/media/1?token=acme.1',
        statusCallbackUrl: 'https://cp.example.test/api/v1/telephony/acme/status/1',
      },
    }]);
  });

  it('refuses a bad signature with 403 signature_invalid and builds no markup', async () => {
    const { useCase, calls } = setup({ validSignature: false });
    await expect(useCase.execute('acme', 1, request)).rejects.toEqual(new ForbiddenError('signature_invalid', 'The webhook signature does not match'));
    expect(calls).toEqual([]);
  });

  it('answers 404 for an unknown provider', async () => {
    const { useCase } = setup();
    const err = await useCase.execute('nope', 1, request).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err).toMatchObject({ code: 'provider_not_found' });
  });

  it('refuses unknown runs, runs of another provider, runs without or with a mismatched configuration as 403, verifying nothing', async () => {
    const { useCase, verified } = setup();
    for (const [provider, runId] of [['acme', 99], ['acme', 2], ['other', 1], ['acme', 3], ['acme', 4]] as const) {
      const err = await useCase.execute(provider, runId, request).catch((e: unknown) => e);
      expect({ provider, runId, err }).toMatchObject({ provider, runId, err: { code: 'signature_invalid' } });
      expect(err).toBeInstanceOf(ForbiddenError);
    }
    expect(verified).toEqual([]);
  });

  it('answers 404 outbound_answer_not_supported when the provider has no answerOutbound', async () => {
    const { useCase, verified } = setup({ answering: false });
    const err = await useCase.execute('acme', 1, request).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err).toMatchObject({ code: 'outbound_answer_not_supported' });
    expect(verified).toEqual([]);
  });
});
