import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openMigratedSqlite } from '../../adapters/storage/sqlite/database.js';
import { AiServiceReader } from '../../core/ai-services/ai-services.use-case.js';
import { exampleWorkflowDefinition } from '../../core/workflows/example-definition.js';
import { startTestService, type Credentials, type TestService } from '../../test/support/test-service.js';

/** AI services (API.md 10) and workflow_configurations (API.md 11) through the HTTP API. */
describe('AI services API', () => {
  let svc: TestService;
  let a: Credentials;
  let b: Credentials;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'callplane-ai-'));
    svc = await startTestService({ db: openMigratedSqlite(join(dir, 'callplane.db')), env: { LOG_LEVEL: 'debug', CALLPLANE_ALLOW_PRIVATE_NETWORK: 'false' } });
    a = { token: (await svc.signup()).token };
    b = { token: (await svc.signup()).token };
  });
  afterAll(async () => {
    await svc.close();
    svc.db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  let seq = 0;
  const create = async (auth: Credentials, config: Record<string, unknown> = { provider: 'openai', api_key: 'sk-test-abcdefgh1234' }, name = `svc ${++seq}`) => {
    const r = await svc.post('/organizations/ai-services', { name, config }, auth);
    expect(r.status).toBe(200);
    return r.body as { id: number; name: string; provider: string; kinds: string[]; credentials: Record<string, unknown> };
  };
  const workflow = (auth: Credentials, workflow_configurations?: unknown) =>
    svc.post('/workflow/create/definition', { name: `wf ${++seq}`, workflow_definition: exampleWorkflowDefinition, ...(workflow_configurations !== undefined ? { workflow_configurations } : {}) }, auth);

  describe('metadata and OpenAPI', () => {
    it('lists only model providers, with kinds and fields from their manifests; telephony metadata lists none of them', async () => {
      const r = await svc.get('/organizations/ai-services/metadata', a);
      expect(r.status).toBe(200);
      expect(r.body.providers.map((p: { provider: string; kinds: string[] }) => [p.provider, p.kinds])).toEqual([
        ['openai', ['llm', 'stt', 'tts']], ['deepgram', ['stt', 'tts']], ['elevenlabs', ['tts']],
      ]);
      const openai = r.body.providers[0];
      expect(openai).toMatchObject({ display_name: expect.any(String), docs_url: expect.stringMatching(/^https:/) });
      expect(openai.fields.map((f: { name: string; type: string; sensitive: boolean; required: boolean }) => [f.name, f.type, f.sensitive, f.required]))
        .toEqual([['api_key', 'password', true, false], ['base_url', 'url', false, false]]);
      const telephony = await svc.get('/organizations/telephony-providers/metadata', a);
      expect(telephony.body.providers.map((p: { provider: string }) => p.provider)).not.toEqual(expect.arrayContaining(['openai']));
      expect(telephony.body.providers.map((p: { provider: string }) => p.provider)).toContain('twilio');
      expect((await svc.get('/organizations/ai-services/metadata')).status).toBe(401);
    });

    it('documents the config union as oneOf with api_key writeOnly, and workflow_configurations\' known keys', async () => {
      const doc = (await svc.get('/openapi.json')).body;
      const schema = doc.paths['/api/v1/organizations/ai-services'].post.requestBody.content['application/json'].schema;
      expect(schema.properties.config.discriminator).toEqual({ propertyName: 'provider' });
      const members = schema.properties.config.oneOf as Array<{ properties: Record<string, { writeOnly?: boolean; const?: string }> }>;
      expect(members.map((m) => m.properties.provider!.const)).toEqual(['openai', 'deepgram', 'elevenlabs']);
      for (const m of members) expect(m.properties.api_key!.writeOnly).toBe(true);
      const telephonyMembers = doc.paths['/api/v1/organizations/telephony-configs'].post.requestBody.content['application/json'].schema.properties.config.oneOf;
      expect(telephonyMembers.map((m: { properties: { provider: { const: string } } }) => m.properties.provider.const)).not.toContain('openai');
      for (const op of ['get', 'put', 'delete']) expect(doc.paths['/api/v1/organizations/ai-services/{service_id}'][op]).toBeDefined();
      const wf = doc.paths['/api/v1/workflow/create/definition'].post.requestBody.content['application/json'].schema.properties.workflow_configurations;
      expect(Object.keys(wf.properties)).toEqual(expect.arrayContaining(['llm', 'stt', 'tts', 'max_call_duration_seconds', 'voicemail']));
    });
  });

  describe('services', () => {
    it('creates with kinds, defaults and masked secrets; lists oldest first; gets one', async () => {
      const s = await create(a, { provider: 'openai', api_key: 'sk-test-abcdefgh1234' }, 'Main LLM');
      expect(s).toEqual({
        id: expect.any(Number), name: 'Main LLM', provider: 'openai', kinds: ['llm', 'stt', 'tts'],
        credentials: { api_key: '****************1234', base_url: 'https://api.openai.com/v1' },
        created_at: expect.stringMatching(/Z$/), updated_at: expect.stringMatching(/Z$/),
      });
      const local = await create(a, { provider: 'openai' });
      expect(local.credentials).toEqual({ api_key: null, base_url: 'https://api.openai.com/v1' });
      const dg = await create(a, { provider: 'deepgram', api_key: 'abc' });
      expect(dg).toMatchObject({ kinds: ['stt', 'tts'], credentials: { api_key: '***', base_url: 'wss://api.deepgram.com' } });
      const list = await svc.get('/organizations/ai-services', a);
      expect(list.body.ai_services.map((x: { id: number }) => x.id)).toEqual(expect.arrayContaining([s.id, local.id, dg.id]));
      const ids = list.body.ai_services.map((x: { id: number }) => x.id);
      expect(ids.indexOf(s.id)).toBeLessThan(ids.indexOf(dg.id));
      expect((await svc.get(`/organizations/ai-services/${s.id}`, a)).body).toEqual(s);
    });

    it('validates: unknown provider, a carrier as provider, name bounds, missing required key, base_url scheme and SSRF', async () => {
      const post = (body: unknown) => svc.post('/organizations/ai-services', body, a);
      expect((await post({ name: 'x', config: { provider: 'twilio', account_sid: 'AC' + '0'.repeat(32), auth_token: 't' } })).status).toBe(422);
      expect((await post({ name: 'x', config: { provider: 'nope' } })).status).toBe(422);
      expect((await post({ name: '', config: { provider: 'openai' } })).body.detail[0].loc).toEqual(['body', 'name']);
      expect((await post({ name: 'x'.repeat(65), config: { provider: 'openai' } })).body.detail[0].loc).toEqual(['body', 'name']);
      const noKey = await post({ name: 'x', config: { provider: 'elevenlabs' } });
      expect(noKey.status).toBe(422);
      expect(noKey.body.detail).toEqual(expect.arrayContaining([expect.objectContaining({ loc: ['body', 'config', 'api_key'] })]));
      for (const base_url of ['http://169.254.169.254/latest', 'http://127.0.0.1:11434/v1', 'ftp://example.com']) {
        const r = await post({ name: 'x', config: { provider: 'openai', base_url } });
        expect(r.status).toBe(422);
        expect(r.body.detail[0].loc).toEqual(['body', 'config', 'base_url']);
      }
      expect((await post({ name: 'x', config: { provider: 'deepgram', api_key: 'k', base_url: 'https://api.deepgram.com' } })).status).toBe(422);
    });

    it('names are unique per organization, case-insensitively, on create and rename', async () => {
      await create(a, undefined, 'Shared Name');
      const dup = await svc.post('/organizations/ai-services', { name: 'shared NAME', config: { provider: 'openai' } }, a);
      expect(dup.status).toBe(409);
      expect(dup.body).toEqual({ detail: expect.any(String), code: 'ai_service_name_taken' });
      const other = await create(a);
      expect((await svc.put(`/organizations/ai-services/${other.id}`, { name: 'SHARED name' }, a)).body.code).toBe('ai_service_name_taken');
      expect((await create(b, undefined, 'Shared Name')).name).toBe('Shared Name');
    });

    it('PUT is partial: masked resubmit keeps the secret, a new value replaces it, null unsets, provider is immutable', async () => {
      const s = await create(a, { provider: 'openai', api_key: 'sk-original-secret-9999', base_url: 'https://llm.example.com/v1' });
      const reader = svc.container.get(AiServiceReader);
      const secret = async () => reader.open((await (reader as unknown as { require(o: number, i: number): Promise<any> }).require(await orgOf(a), s.id)));
      // the retrieved service sent back unchanged keeps the secret
      const same = await svc.put(`/organizations/ai-services/${s.id}`, { name: s.name, config: { provider: 'openai', ...s.credentials } }, a);
      expect(same.status).toBe(200);
      expect(same.body.credentials).toEqual(s.credentials);
      expect((await secret()).api_key).toBe('sk-original-secret-9999');
      // only the sent field changes
      const moved = await svc.put(`/organizations/ai-services/${s.id}`, { config: { base_url: 'https://other.example.com/v1' } }, a);
      expect(moved.body.credentials).toEqual({ api_key: s.credentials.api_key, base_url: 'https://other.example.com/v1' });
      expect((await secret()).api_key).toBe('sk-original-secret-9999');
      // a different mask is a new value
      await svc.put(`/organizations/ai-services/${s.id}`, { config: { api_key: '***9999' } }, a);
      expect((await secret()).api_key).toBe('***9999');
      await svc.put(`/organizations/ai-services/${s.id}`, { config: { api_key: 'sk-new-key-0001' } }, a);
      expect((await secret()).api_key).toBe('sk-new-key-0001');
      // null unsets the optional key
      const unset = await svc.put(`/organizations/ai-services/${s.id}`, { config: { api_key: null } }, a);
      expect(unset.body.credentials.api_key).toBeNull();
      const imm = await svc.put(`/organizations/ai-services/${s.id}`, { config: { provider: 'deepgram' } }, a);
      expect(imm.status).toBe(400);
      expect(imm.body).toEqual({ detail: expect.any(String), code: 'provider_immutable' });
      const bad = await svc.put(`/organizations/ai-services/${s.id}`, { config: { base_url: 'http://169.254.169.254/' } }, a);
      expect(bad.status).toBe(422);
      expect(bad.body.detail[0].loc).toEqual(['body', 'config', 'base_url']);
    });

    it('stores ciphertext only (raw SQLite row, database file) and never logs the secret', async () => {
      const canary = 'sk-plaintext-canary-QWERTYUI-7777';
      const s = await create(a, { provider: 'openai', api_key: canary });
      await svc.put(`/organizations/ai-services/${s.id}`, { config: { api_key: canary, base_url: 'https://x.example.com/v1' } }, a);
      const row = svc.db.prepare('SELECT * FROM ai_services WHERE id = ?').get(s.id) as Record<string, unknown>;
      expect(JSON.stringify(row)).not.toContain(canary);
      expect(JSON.stringify(row)).not.toContain('QWERTYUI');
      expect(Object.keys(JSON.parse(row.secrets as string))).toEqual(['api_key']);
      expect(JSON.parse(row.settings as string)).toEqual({ base_url: 'https://x.example.com/v1' });
      // a ciphertext moved into another record does not decrypt
      const other = await create(a, { provider: 'openai', api_key: 'sk-other' });
      svc.db.prepare('UPDATE ai_services SET secrets = ? WHERE id = ?').run(row.secrets, other.id);
      expect((await svc.get(`/organizations/ai-services/${other.id}`, a)).status).toBe(500);
      svc.db.prepare('DELETE FROM ai_services WHERE id = ?').run(other.id);
      svc.db.pragma('wal_checkpoint(TRUNCATE)');
      for (const f of ['callplane.db', 'callplane.db-wal']) {
        const p = join(dir, f);
        if (existsSync(p)) expect(readFileSync(p).includes(Buffer.from(canary))).toBe(false);
      }
      expect(svc.logs.length).toBeGreaterThan(0);
      expect(svc.logs.join('\n')).not.toContain(canary);
    });

    it('another organization gets 404 on every route and sees none in its list', async () => {
      const s = await create(a);
      for (const r of [
        await svc.get(`/organizations/ai-services/${s.id}`, b),
        await svc.put(`/organizations/ai-services/${s.id}`, { name: 'mine' }, b),
        await svc.delete(`/organizations/ai-services/${s.id}`, b),
      ]) expect(r).toMatchObject({ status: 404, body: { detail: expect.any(String), code: 'ai_service_not_found' } });
      expect((await svc.get('/organizations/ai-services', b)).body.ai_services.map((x: { id: number }) => x.id)).not.toContain(s.id);
      expect((await svc.get(`/organizations/ai-services/${s.id}`, a)).status).toBe(200);
    });
  });

  describe('workflow_configurations (API.md 11)', () => {
    it('validates known keys with 422 locs, keeps unknown keys, and checks service ids by organization and kind', async () => {
      const llm = await create(a, { provider: 'openai' });
      const dg = await create(a, { provider: 'deepgram', api_key: 'k' });
      const el = await create(a, { provider: 'elevenlabs', api_key: 'k' });
      const foreign = await create(b, { provider: 'openai' });
      const config = {
        llm: { service_id: llm.id, model: 'gpt-4o-mini', temperature: 0.7 },
        stt: { service_id: dg.id, model: 'nova-3', language: 'en' },
        tts: { service_id: el.id, voice: 'rachel' },
        max_call_duration_seconds: 600, user_idle_timeout_seconds: 10, interruption_min_speech_ms: 300,
        voicemail: { detect: true, action: 'hangup' }, ui_theme: { x: 1 },
      };
      const ok = await workflow(a, config);
      expect(ok.status).toBe(200);
      expect(ok.body.workflow_configurations).toEqual(config);

      const bad = await workflow(a, { ...config, max_call_duration_seconds: 5, llm: { service_id: llm.id, temperature: 3 }, voicemail: { action: 'beep' } });
      expect(bad.status).toBe(422);
      expect(bad.body.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual(expect.arrayContaining([
        ['body', 'workflow_configurations', 'max_call_duration_seconds'], ['body', 'workflow_configurations', 'llm', 'model'],
        ['body', 'workflow_configurations', 'llm', 'temperature'], ['body', 'workflow_configurations', 'voicemail', 'action'],
      ]));

      const missing = await workflow(a, { ...config, llm: { service_id: 999_999, model: 'm' } });
      expect(missing).toMatchObject({ status: 400, body: { code: 'ai_service_not_found' } });
      const otherOrg = await workflow(a, { ...config, llm: { service_id: foreign.id, model: 'm' } });
      expect(otherOrg).toMatchObject({ status: 400, body: { code: 'ai_service_not_found' } });
      const mismatch = await workflow(a, { ...config, llm: { service_id: el.id, model: 'm' } });
      expect(mismatch).toMatchObject({ status: 400, body: { code: 'ai_service_kind_mismatch' } });
      expect((await workflow(a, { ...config, stt: { service_id: el.id } })).body.code).toBe('ai_service_kind_mismatch');

      // update: the same checks; the stored value is unchanged by a refused update
      const id = ok.body.id;
      expect((await svc.put(`/workflow/${id}`, { workflow_configurations: { tts: { service_id: llm.id, voice: 'alloy' }, user_idle_timeout_seconds: 2 } }, a)).status).toBe(422);
      expect((await svc.put(`/workflow/${id}`, { workflow_configurations: { tts: { service_id: dg.id } } }, a)).status).toBe(200);
      expect((await svc.put(`/workflow/${id}`, { workflow_configurations: { llm: { service_id: dg.id, model: 'm' } } }, a)).body.code).toBe('ai_service_kind_mismatch');
      expect((await svc.get(`/workflow/${id}`, a)).body.workflow_configurations).toEqual({ tts: { service_id: dg.id } });
    });

    it('DELETE refuses a service a workflow names (409 ai_service_in_use), then deletes once it is free', async () => {
      const s = await create(a, { provider: 'openai' });
      const wf = await workflow(a, { llm: { service_id: s.id, model: 'm' } });
      expect(wf.status).toBe(200);
      // archived workflows still hold it
      await svc.put(`/workflow/${wf.body.id}/status`, { status: 'archived' }, a);
      const busy = await svc.delete(`/organizations/ai-services/${s.id}`, a);
      expect(busy.status).toBe(409);
      expect(busy.body).toEqual({ detail: expect.stringContaining(wf.body.name), code: 'ai_service_in_use' });
      await svc.put(`/workflow/${wf.body.id}`, { workflow_configurations: {} }, a);
      expect((await svc.delete(`/organizations/ai-services/${s.id}`, a)).body).toEqual({ id: s.id, deleted: true });
      expect((await svc.get(`/organizations/ai-services/${s.id}`, a)).status).toBe(404);
      expect((await svc.delete(`/organizations/ai-services/${s.id}`, a)).status).toBe(404);
    });
  });

  const orgOf = async (auth: Credentials) => (await svc.get('/auth/me', auth)).body.organization.id as number;
});
