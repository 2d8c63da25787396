import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestService, type TestService } from '../../test/support/test-service.js';

describe('identity API (API.md sections 2-3)', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc.close();
  });

  it('serves health without credentials', async () => {
    const r = await svc.get('/health');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: 'ok', version: expect.any(String) });
  });

  it('signs up, logs in, answers /auth/me, logs out', async () => {
    const signup = await svc.post('/auth/signup', { email: 'Ada@Example.com', password: 'longenough', name: 'Ada', organization_name: 'Analytical' });
    expect(signup.status).toBe(200);
    expect(signup.body).toMatchObject({ token_type: 'bearer', user: { email: 'ada@example.com', name: 'Ada' } });
    expect(Date.parse(signup.body.expires_at) - Date.now()).toBeGreaterThan(6.9 * 86_400_000);

    const login = await svc.post('/auth/login', { email: 'ada@example.com', password: 'longenough' });
    expect(login.status).toBe(200);
    const token = login.body.token as string;
    expect(token).not.toBe(signup.body.token);

    const me = await svc.get('/auth/me', { token });
    expect(me.status).toBe(200);
    expect(me.body).toEqual({ user: { id: login.body.user.id, email: 'ada@example.com', name: 'Ada', organization_id: login.body.user.organization_id }, organization: { id: login.body.user.organization_id, name: 'Analytical' } });

    expect((await svc.post('/auth/logout', undefined, { token })).status).toBe(200);
    const after = await svc.get('/auth/me', { token });
    expect(after.status).toBe(401);
    expect(after.body.code).toBe('invalid_credentials');
    // the other session is still valid
    expect((await svc.get('/auth/me', { token: signup.body.token })).status).toBe(200);
  });

  it('refuses a duplicate email with 409 email_taken', async () => {
    await svc.signup('dup@example.com');
    const r = await svc.post('/auth/signup', { email: 'DUP@example.com', password: 'longenough' });
    expect(r.status).toBe(409);
    expect(r.body).toEqual({ detail: expect.any(String), code: 'email_taken' });
  });

  it('answers wrong email and wrong password alike', async () => {
    await svc.signup('known@example.com', 'rightpassword');
    const a = await svc.post('/auth/login', { email: 'known@example.com', password: 'wrongpassword' });
    const b = await svc.post('/auth/login', { email: 'unknown@example.com', password: 'wrongpassword' });
    expect(a.status).toBe(401);
    expect(b.status).toBe(401);
    expect(a.body).toEqual(b.body);
    expect(a.body.code).toBe('invalid_credentials');
  });

  it('requires credentials on protected routes', async () => {
    const r = await svc.get('/auth/me');
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('not_authenticated');
    expect((await svc.get('/auth/me', { token: 'nonsense' })).body.code).toBe('invalid_credentials');
  });

  it('creates, lists and revokes API keys; keys authenticate; X-API-Key decides over Bearer', async () => {
    const { token } = await svc.signup();
    const created = await svc.post('/user/api-keys', { name: 'ci' }, { token });
    expect(created.status).toBe(200);
    const key = created.body.api_key as string;
    expect(key).toMatch(/^cpk_[A-Za-z0-9_-]{43}$/);
    expect(created.body.key_prefix).toBe(key.slice(0, 12));

    const list = await svc.get('/user/api-keys', { apiKey: key });
    expect(list.status).toBe(200);
    expect(list.body.api_keys).toHaveLength(1);
    expect(JSON.stringify(list.body)).not.toContain(key);
    expect(list.body.api_keys[0]).toMatchObject({ id: created.body.id, name: 'ci', key_prefix: key.slice(0, 12), revoked_at: null });

    // an API key cannot mint keys
    const minted = await svc.post('/user/api-keys', { name: 'nope' }, { apiKey: key });
    expect(minted.status).toBe(403);
    expect(minted.body.code).toBe('session_required');

    // an invalid key is 401 even with a valid token
    const both = await svc.get('/auth/me', { token, apiKey: 'cpk_invalid' });
    expect(both.status).toBe(401);

    const revoked = await svc.delete(`/user/api-keys/${created.body.id}`, { token });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ id: created.body.id, deleted: true });
    expect((await svc.get('/auth/me', { apiKey: key })).status).toBe(401);
  });

  it('hides another organization’s API keys (404, absent from lists)', async () => {
    const a = await svc.signup();
    const b = await svc.signup();
    const key = await svc.post('/user/api-keys', { name: 'a-key' }, { token: a.token });
    expect((await svc.delete(`/user/api-keys/${key.body.id}`, { token: b.token })).status).toBe(404);
    expect((await svc.get('/user/api-keys', { token: b.token })).body.api_keys).toEqual([]);
    expect((await svc.get('/user/api-keys', { token: a.token })).body.api_keys[0].revoked_at).toBeNull();
  });

  it('returns FastAPI-shaped 422s', async () => {
    const { token } = await svc.signup();
    const r = await svc.post('/user/api-keys', { name: '' }, { token });
    expect(r.status).toBe(422);
    expect(r.body).toEqual({ detail: [{ loc: ['body', 'name'], msg: expect.any(String), type: 'string_too_short' }] });
    const missing = await svc.post('/user/api-keys', {}, { token });
    expect(missing.body.detail).toEqual([{ loc: ['body', 'name'], msg: 'Field required', type: 'missing' }]);
    const path = await svc.delete('/user/api-keys/abc', { token });
    expect(path.status).toBe(422);
    expect(path.body.detail[0].loc).toEqual(['path', 'api_key_id']);
  });

  it('answers malformed JSON, missing content type, unknown routes and oversized bodies', async () => {
    const bad = await svc.request('POST', '/auth/login', { rawBody: '{"email":', headers: { 'content-type': 'application/json' } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0]).toMatchObject({ loc: ['body'], type: 'json_invalid' });
    const noType = await svc.request('POST', '/auth/login', { rawBody: '{"email":"a@b.c","password":"x"}', headers: { 'content-type': 'text/plain' } });
    expect(noType.status).toBe(422);
    expect(noType.body.detail[0]).toMatchObject({ loc: ['body'], type: 'missing' });
    const unknown = await svc.get('/no/such/route');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ detail: 'Not Found', code: 'not_found' });
    const big = await svc.request('POST', '/auth/login', { rawBody: JSON.stringify({ email: 'x'.repeat(2 * 1024 * 1024) }), headers: { 'content-type': 'application/json' } });
    expect(big.status).toBe(413);
    expect(big.body.code).toBe('payload_too_large');
  });

  it('rate-limits repeated login failures per email', async () => {
    await svc.signup('target@example.com', 'rightpassword');
    for (let i = 0; i < 5; i++) expect((await svc.post('/auth/login', { email: 'target@example.com', password: 'wrong-' + i })).status).toBe(401);
    const limited = await svc.post('/auth/login', { email: 'target@example.com', password: 'rightpassword' });
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('counts a login attempt before verifying it: 40 parallel wrong logins let at most 5 through', async () => {
    await svc.signup('parallel@example.com', 'rightpassword');
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => svc.post('/auth/login', { email: 'parallel@example.com', password: `wrong-${i}` })),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(5);
    expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([]);
    for (const r of results.filter((x) => x.status === 429)) {
      expect(r.body.code).toBe('rate_limited');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    }
  });

  it('refuses logout with an API key: 403 session_required, and the key keeps working', async () => {
    const { token } = await svc.signup();
    const key = await svc.post('/user/api-keys', { name: 'logout-test' }, { token });
    expect(key.status).toBe(200);
    const r = await svc.post('/auth/logout', undefined, { apiKey: key.body.api_key });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ detail: expect.any(String), code: 'session_required' });
    expect((await svc.get('/auth/me', { apiKey: key.body.api_key })).status).toBe(200);
  });

  it('never writes secrets to the log', async () => {
    const password = 'SuperSecretPassword-42';
    const s = await svc.post('/auth/signup', { email: 'logs@example.com', password });
    const key = await svc.post('/user/api-keys', { name: 'k' }, { token: s.body.token });
    await svc.get('/auth/me', { apiKey: key.body.api_key });
    await svc.post('/auth/login', { email: 'logs@example.com', password: 'wrong-password-xyz' });
    const all = svc.logs.join('\n');
    expect(svc.logs.length).toBeGreaterThan(3);
    for (const secret of [password, s.body.token, key.body.api_key, 'wrong-password-xyz']) expect(all).not.toContain(secret);
  });
});
