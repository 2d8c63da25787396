import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { verifyCallplaneSignature } from '../../docs/examples/webhooks/verify-signature.js';
import { WebhookDispatcher } from '../../core/webhooks/webhook-dispatcher.js';
import { startTestService, type Credentials, type TestService } from '../../test/support/test-service.js';
import { startWebhookReceiver } from '../../test/support/webhook-receiver.js';
import { waitFor } from '../../test/e2e/campaign-support.js';

/** Event webhooks (API.md 14) through the HTTP API, delivering to a local receiver. */
describe('webhooks API', () => {
  let svc: TestService;
  let a: Credentials;
  let b: Credentials;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    svc = await startTestService({ env: { LOG_LEVEL: 'debug' } });
    a = { token: (await svc.signup()).token };
    b = { token: (await svc.signup()).token };
  });
  afterAll(async () => {
    await svc.close();
    await receiver.close();
  });

  const create = async (auth: Credentials, body: Record<string, unknown> = {}) => {
    const r = await svc.post('/organizations/webhooks', { url: receiver.url, events: ['call.ended', 'campaign.completed'], ...body }, auth);
    expect(r.status).toBe(200);
    return r.body as { id: number; url: string; events: string[]; description: string | null; secret: string; created_at: string };
  };

  it('creates an endpoint showing its secret once; lists, reads and updates it without the secret', async () => {
    const w = await create(a, { description: 'CRM' });
    expect(w).toEqual({
      id: expect.any(Number), url: receiver.url, events: ['call.ended', 'campaign.completed'], description: 'CRM',
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/), created_at: expect.any(String), updated_at: expect.any(String),
    });
    const list = await svc.get('/organizations/webhooks', a);
    expect(list.body.webhooks.find((x: { id: number }) => x.id === w.id)).toEqual({ ...w, secret: undefined, description: 'CRM' });
    expect(JSON.stringify(list.body)).not.toContain('whsec_');
    expect((await svc.get(`/organizations/webhooks/${w.id}`, a)).body).not.toHaveProperty('secret');
    const u = await svc.put(`/organizations/webhooks/${w.id}`, { events: ['call.started'] }, a);
    expect(u.status).toBe(200);
    expect(u.body).toMatchObject({ url: receiver.url, events: ['call.started'], description: 'CRM' });
    // the secret is stored encrypted, never in clear
    const row = svc.db.prepare('SELECT secret FROM webhook_endpoints WHERE id = ?').get(w.id) as { secret: string };
    expect(row.secret).not.toContain(w.secret.slice(6));
    expect(svc.logs.join('\n')).not.toContain(w.secret.slice(6));
  });

  it('refuses unknown events and URLs the network policy refuses (422), another organization sees 404', async () => {
    const bad = await svc.post('/organizations/webhooks', { url: receiver.url, events: ['call.ended', 'call.exploded'] }, a);
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['body', 'events', 1]);
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://[::ffff:169.254.169.254]/', 'http://metadata.google.internal/', 'ftp://x.example/', 'https://user:pw@x.example/']) {
      const r = await svc.post('/organizations/webhooks', { url, events: ['call.ended'] }, a);
      expect([url, r.status]).toEqual([url, 422]);
      expect(r.body.detail[0].loc).toEqual(['body', 'url']);
    }
    const w = await create(a);
    expect((await svc.put(`/organizations/webhooks/${w.id}`, { url: 'http://169.254.169.254/' }, a)).status).toBe(422);
    for (const [m, p] of [['GET', ''], ['PUT', ''], ['DELETE', ''], ['POST', '/rotate-secret'], ['GET', '/deliveries'], ['POST', '/test']] as const) {
      const r = await svc.request(m, `/organizations/webhooks/${w.id}${p}`, { auth: b, ...(m === 'PUT' ? { body: { description: 'x' } } : {}) });
      expect([m, p, r.status, r.body.code]).toEqual([m, p, 404, 'webhook_not_found']);
    }
    expect((await svc.get('/organizations/webhooks', b)).body.webhooks).toEqual([]);
  });

  it('delivers a signed test event the Node snippet verifies; rotate-secret signs the next one with the new secret', async () => {
    const w = await create(a);
    const before = receiver.received.length;
    const ping = await svc.post(`/organizations/webhooks/${w.id}/test`, undefined, a);
    expect(ping.status).toBe(200);
    expect(ping.body).toMatchObject({ id: expect.any(Number), event: 'webhook.test', status: 'pending', attempts: 0 });
    await waitFor(() => receiver.received.length > before);
    const got = receiver.received[before]!;
    expect(got.headers['callplane-delivery-id']).toBe(String(ping.body.id));
    expect(got.headers['callplane-event']).toBe('webhook.test');
    expect(got.headers['content-type']).toBe('application/json');
    expect(JSON.parse(got.body)).toEqual({ id: ping.body.id, type: 'webhook.test', created_at: expect.any(String), data: { webhook_id: w.id } });
    expect(verifyCallplaneSignature(w.secret, String(got.headers['callplane-signature']), got.body)).toBe(true);
    expect(verifyCallplaneSignature(w.secret, String(got.headers['callplane-signature']), got.body + ' ')).toBe(false);

    await waitFor(async () => (await svc.get(`/organizations/webhooks/${w.id}/deliveries`, a)).body.deliveries[0]?.status === 'delivered');
    const log = await svc.get(`/organizations/webhooks/${w.id}/deliveries?limit=10`, a);
    expect(log.body).toEqual({
      deliveries: [{ id: ping.body.id, event: 'webhook.test', status: 'delivered', attempts: 1, last_status_code: 200, last_error: null, next_attempt_at: null, created_at: expect.any(String) }],
      total_count: 1, page: 1, limit: 10, total_pages: 1,
    });

    const rotated = await svc.post(`/organizations/webhooks/${w.id}/rotate-secret`, undefined, a);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(w.secret);
    const n = receiver.received.length;
    const retry = await svc.post(`/organizations/webhooks/${w.id}/deliveries/${ping.body.id}/retry`, undefined, a);
    expect(retry.body).toMatchObject({ id: ping.body.id, status: 'pending' });
    await waitFor(() => receiver.received.length > n);
    const again = receiver.received[n]!;
    expect(again.body).toBe(got.body); // the same id and bytes
    expect(verifyCallplaneSignature(rotated.body.secret, String(again.headers['callplane-signature']), again.body)).toBe(true);
    expect(verifyCallplaneSignature(w.secret, String(again.headers['callplane-signature']), again.body)).toBe(false);
    expect((await svc.post(`/organizations/webhooks/${w.id}/deliveries/999999/retry`, undefined, a)).body.code).toBe('webhook_delivery_not_found');

    expect((await svc.delete(`/organizations/webhooks/${w.id}`, a)).body).toEqual({ id: w.id, deleted: true });
    expect((await svc.get(`/organizations/webhooks/${w.id}`, a)).status).toBe(404);
    await svc.container.get(WebhookDispatcher).idle();
  });
});
