import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openMigratedSqlite } from '../../adapters/storage/sqlite/database.js';
import { TelephonyConfigurationRepository } from '../../core/ports/telephony-configuration.repository.port.js';
import { CredentialVault } from '../../core/telephony/credential-vault.js';
import simulator from '../../providers/simulator/index.js';
import { startTestService, type TestService } from '../../test/support/test-service.js';
import { exampleWorkflowDefinition } from '../../core/workflows/example-definition.js';

type Auth = { token: string };
const SECRET = 'sk_sim_Sup3rSecretValue_9876';

describe('telephony API (API.md section 5)', () => {
  let svc: TestService;
  let a: Auth;
  let b: Auth;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'callplane-telephony-'));
    svc = await startTestService({ db: openMigratedSqlite(join(dir, 'callplane.db')), env: { LOG_LEVEL: 'debug' } });
    a = { token: (await svc.signup()).token };
    b = { token: (await svc.signup()).token };
  });
  afterAll(async () => {
    await svc.close();
    svc.db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  let seq = 0;
  const createConfig = async (auth: Auth, config: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => {
    const r = await svc.post('/organizations/telephony-configs', { name: `cfg ${++seq}`, config: { provider: 'simulator', ...config }, ...extra }, auth);
    expect(r.status).toBe(200);
    return r.body;
  };
  const createWorkflow = async (auth: Auth, name = `wf ${++seq}`) => {
    const r = await svc.post('/workflow/create/definition', { name, workflow_definition: exampleWorkflowDefinition }, auth);
    expect(r.status).toBe(200);
    return r.body as { id: number; name: string };
  };
  const storedConfig = async (id: number) => {
    const repo = svc.container.get<TelephonyConfigurationRepository>(TelephonyConfigurationRepository);
    const c = (await repo.findForProviderEvent(id))!;
    return { row: c, open: svc.container.get(CredentialVault).open(simulator.manifest, c) };
  };

  describe('provider metadata', () => {
    it('lists the registered providers from their manifests', async () => {
      const r = await svc.get('/organizations/telephony-providers/metadata', a);
      expect(r.status).toBe(200);
      const sim = r.body.providers.find((p: { provider: string }) => p.provider === 'simulator');
      expect(sim).toMatchObject({ display_name: expect.any(String), docs_url: expect.stringMatching(/^https:/) });
      expect(sim.fields.map((f: { name: string; type: string; sensitive: boolean }) => [f.name, f.type, f.sensitive])).toEqual([
        ['account_id', 'string', false], ['api_key', 'password', true], ['ring_ms', 'string', false], ['talk_ms', 'string', false],
        ['caller_lines', 'string_array', false], ['caller_persona', 'textarea', false],
      ]);
      for (const f of sim.fields) expect(Object.keys(f).sort()).toEqual(['description', 'label', 'name', 'placeholder', 'required', 'sensitive', 'type', 'value_type']);
      expect((await svc.get('/organizations/telephony-providers/metadata')).status).toBe(401);
    });

    it('documents the config union in OpenAPI with sensitive fields writeOnly', async () => {
      const doc = (await svc.get('/openapi.json')).body;
      const schema = doc.paths['/api/v1/organizations/telephony-configs'].post.requestBody.content['application/json'].schema;
      expect(schema.properties.config.discriminator).toEqual({ propertyName: 'provider' });
      const member = schema.properties.config.oneOf.find((m: { properties: { provider: { const: string } } }) => m.properties.provider.const === 'simulator');
      expect(member.properties.api_key.writeOnly).toBe(true);
      expect(member.properties.ring_ms.writeOnly).toBeUndefined();
      expect(member.properties.from_numbers).toBeDefined();
    });
  });

  describe('configurations', () => {
    it('creates with masked credentials, defaults filled, from_numbers ignored', async () => {
      const r = await svc.post('/organizations/telephony-configs', {
        name: 'Main', config: { provider: 'simulator', account_id: 'acct-main', api_key: SECRET, from_numbers: ['+15550001111'], bogus: 1 },
      }, a);
      expect(r.status).toBe(200);
      expect(r.body).toEqual({
        id: expect.any(Number), name: 'Main', provider: 'simulator', is_default_outbound: false,
        credentials: { account_id: 'acct-main', api_key: `${'*'.repeat(SECRET.length - 4)}9876`, ring_ms: 300, talk_ms: 1000, caller_lines: null, caller_persona: null },
        phone_number_count: 0, created_at: expect.stringMatching(/Z$/), updated_at: expect.stringMatching(/Z$/),
        credentials_check: { ok: true, message: 'The simulator places no real calls; its credentials always pass', checked_at: expect.stringMatching(/Z$/) },
      });
      const { open } = await storedConfig(r.body.id);
      expect(open).toEqual({ account_id: 'acct-main', api_key: SECRET, ring_ms: 300, talk_ms: 1000 });
    });

    it('masks short secrets entirely', async () => {
      const c = await createConfig(a, { api_key: 'abcd' });
      expect(c.credentials.api_key).toBe('****');
      const c2 = await createConfig(a, { api_key: 'abcde' });
      expect(c2.credentials.api_key).toBe('*bcde');
      const c3 = await createConfig(a, {});
      expect(c3.credentials.api_key).toBeNull();
    });

    it('validates config per provider (422 with loc under body.config)', async () => {
      const cases: Array<[Record<string, unknown>, (string | number)[]]> = [
        [{ provider: 'simulator', ring_ms: 60_001 }, ['body', 'config', 'ring_ms']],
        [{ provider: 'simulator', talk_ms: 'slow' }, ['body', 'config', 'talk_ms']],
        [{ provider: 'nope' }, ['body', 'config', 'provider']],
        [{ ring_ms: 5 }, ['body', 'config', 'provider']],
      ];
      for (const [config, loc] of cases) {
        const r = await svc.post('/organizations/telephony-configs', { name: `bad ${++seq}`, config }, a);
        expect(r.status).toBe(422);
        expect(r.body.detail.map((d: { loc: unknown }) => d.loc)).toContainEqual(loc);
      }
      for (const name of ['', 'x'.repeat(65)]) {
        expect((await svc.post('/organizations/telephony-configs', { name, config: { provider: 'simulator' } }, a)).status).toBe(422);
      }
    });

    it('keeps names unique per organization case-insensitively (create and rename), not across organizations', async () => {
      await svc.post('/organizations/telephony-configs', { name: 'Office Line', config: { provider: 'simulator' } }, a);
      const dup = await svc.post('/organizations/telephony-configs', { name: 'OFFICE line', config: { provider: 'simulator' } }, a);
      expect(dup.status).toBe(409);
      expect(dup.body).toEqual({ detail: expect.any(String), code: 'telephony_configuration_name_taken' });
      expect((await svc.post('/organizations/telephony-configs', { name: 'office line', config: { provider: 'simulator' } }, b)).status).toBe(200);
      const other = await createConfig(a);
      const rename = await svc.put(`/organizations/telephony-configs/${other.id}`, { name: 'office LINE' }, a);
      expect(rename.status).toBe(409);
      expect(rename.body.code).toBe('telephony_configuration_name_taken');
    });

    it('has one default outbound per organization', async () => {
      const first = await createConfig(a, {}, { is_default_outbound: true });
      expect(first.is_default_outbound).toBe(true);
      const second = await createConfig(a, {}, { is_default_outbound: true });
      expect((await svc.get(`/organizations/telephony-configs/${first.id}`, a)).body.is_default_outbound).toBe(false);
      const set = await svc.post(`/organizations/telephony-configs/${first.id}/set-default-outbound`, undefined, a);
      expect(set.status).toBe(200);
      expect(set.body.is_default_outbound).toBe(true);
      expect((await svc.get(`/organizations/telephony-configs/${second.id}`, a)).body.is_default_outbound).toBe(false);
      expect((await svc.post(`/organizations/telephony-configs/${first.id}/set-default-outbound`, undefined, b)).status).toBe(404);
    });

    it('PUT merges config, restores masked secrets only on an exact mask match, refuses a provider change', async () => {
      const c = await createConfig(a, { api_key: SECRET, ring_ms: 100 });
      // the retrieved configuration sent back unchanged keeps the secret
      const back = await svc.put(`/organizations/telephony-configs/${c.id}`, { config: { provider: 'simulator', ...c.credentials } }, a);
      expect(back.status).toBe(200);
      expect(back.body.credentials).toEqual(c.credentials);
      expect((await storedConfig(c.id)).open.api_key).toBe(SECRET);
      // partial: only ring_ms changes, provider may be omitted
      const partial = await svc.put(`/organizations/telephony-configs/${c.id}`, { config: { ring_ms: 5 } }, a);
      expect(partial.body.credentials).toMatchObject({ ring_ms: 5, talk_ms: 1000, api_key: c.credentials.api_key });
      expect((await storedConfig(c.id)).open.api_key).toBe(SECRET);
      // a different mask is a new value
      const otherMask = `*${c.credentials.api_key}`;
      await svc.put(`/organizations/telephony-configs/${c.id}`, { config: { api_key: otherMask } }, a);
      expect((await storedConfig(c.id)).open.api_key).toBe(otherMask);
      // a new secret replaces; null unsets
      await svc.put(`/organizations/telephony-configs/${c.id}`, { config: { api_key: 'new-secret-1234' } }, a);
      expect((await storedConfig(c.id)).open.api_key).toBe('new-secret-1234');
      const unset = await svc.put(`/organizations/telephony-configs/${c.id}`, { config: { api_key: null } }, a);
      expect(unset.body.credentials.api_key).toBeNull();
      // invalid merged value
      const bad = await svc.put(`/organizations/telephony-configs/${c.id}`, { config: { talk_ms: -1 } }, a);
      expect(bad.status).toBe(422);
      expect(bad.body.detail[0].loc).toEqual(['body', 'config', 'talk_ms']);
      // provider immutable
      const imm = await svc.put(`/organizations/telephony-configs/${c.id}`, { config: { provider: 'twilio', account_sid: 'AC' + 'a'.repeat(32) } }, a);
      expect(imm.status).toBe(400);
      expect(imm.body).toEqual({ detail: expect.any(String), code: 'provider_immutable' });
      // name only
      const renamed = await svc.put(`/organizations/telephony-configs/${c.id}`, { name: `renamed ${c.id}` }, a);
      expect(renamed.body).toMatchObject({ name: `renamed ${c.id}`, credentials: { ring_ms: 5 } });
    });

    it('stores ciphertext only: the secret is in no column, not in the database file, not in the logs', async () => {
      const secret = 'sk_plaintext_canary_ABCDEFGH_4242';
      const c = await createConfig(a, { api_key: secret });
      await svc.put(`/organizations/telephony-configs/${c.id}`, { config: { api_key: secret, ring_ms: 7 } }, a);
      const row = svc.db.prepare('SELECT * FROM telephony_configurations WHERE id = ?').get(c.id) as Record<string, unknown>;
      expect(JSON.stringify(row)).not.toContain(secret);
      expect(JSON.stringify(row)).not.toContain('ABCDEFGH');
      expect(Object.keys(JSON.parse(row.secrets as string))).toEqual(['api_key']);
      expect(JSON.parse(row.settings as string)).not.toHaveProperty('api_key');
      // a ciphertext moved to another record does not decrypt (the context binds org and record)
      const other = await createConfig(a, { api_key: 'x-other-secret' });
      svc.db.prepare('UPDATE telephony_configurations SET secrets = ? WHERE id = ?').run(row.secrets, other.id);
      await expect(storedConfig(other.id)).rejects.toThrow();
      svc.db.prepare('DELETE FROM telephony_configurations WHERE id = ?').run(other.id);
      svc.db.pragma('wal_checkpoint(TRUNCATE)');
      for (const f of ['callplane.db', 'callplane.db-wal']) {
        const p = join(dir, f);
        if (existsSync(p)) expect(readFileSync(p).includes(Buffer.from(secret))).toBe(false);
      }
      expect(svc.logs.join('\n')).not.toContain(secret);
      expect(svc.logs.length).toBeGreaterThan(0);
    });

    it('lists oldest first with phone_number_count; 404 for other organizations; delete removes the numbers', async () => {
      const c1 = await createConfig(b);
      const c2 = await createConfig(b);
      await svc.post(`/organizations/telephony-configs/${c2.id}/phone-numbers`, { address: '+14155550190' }, b);
      const list = await svc.get('/organizations/telephony-configs', b);
      const ids = list.body.configurations.map((c: { id: number }) => c.id);
      expect(ids.indexOf(c1.id)).toBeLessThan(ids.indexOf(c2.id));
      expect(list.body.configurations.find((c: { id: number }) => c.id === c2.id).phone_number_count).toBe(1);
      expect((await svc.get('/organizations/telephony-configs', a)).body.configurations.map((c: { id: number }) => c.id)).not.toContain(c1.id);
      for (const r of [
        await svc.get(`/organizations/telephony-configs/${c1.id}`, a),
        await svc.put(`/organizations/telephony-configs/${c1.id}`, { name: 'steal' }, a),
        await svc.delete(`/organizations/telephony-configs/${c1.id}`, a),
        await svc.get('/organizations/telephony-configs/999999', a),
      ]) {
        expect(r.status).toBe(404);
        expect(r.body.code).toBe('telephony_configuration_not_found');
      }
      const del = await svc.delete(`/organizations/telephony-configs/${c2.id}`, b);
      expect(del.body).toEqual({ id: c2.id, deleted: true });
      expect((await svc.get(`/organizations/telephony-configs/${c2.id}`, b)).status).toBe(404);
      expect(svc.db.prepare('SELECT COUNT(*) AS n FROM phone_numbers WHERE telephony_configuration_id = ?').get(c2.id)).toEqual({ n: 0 });
    });
  });

  describe('phone numbers', () => {
    const base = (configId: number) => `/organizations/telephony-configs/${configId}/phone-numbers`;

    it('normalizes pstn, sip_uri and extensions; fills inbound_workflow_name; 409 exists in the organization', async () => {
      const c = await createConfig(a, { account_id: `acct-n-${++seq}` });
      const w = await createWorkflow(a, 'Front desk');
      const pstn = await svc.post(base(c.id), { address: '(415) 555-0142', country_code: 'us', label: 'Main', inbound_workflow_id: w.id }, a);
      expect(pstn.status).toBe(200);
      expect(pstn.body).toEqual({
        id: expect.any(Number), telephony_configuration_id: c.id, address: '(415) 555-0142', address_normalized: '+14155550142', address_type: 'pstn',
        extension: null, country_code: 'US', label: 'Main', is_active: true, is_default_caller_id: false, extra_metadata: {}, inbound_workflow_id: w.id,
        inbound_workflow_name: 'Front desk', created_at: expect.any(String), updated_at: expect.any(String),
        provider_sync: { ok: true, message: expect.any(String) },
      });
      const sip = await svc.post(base(c.id), { address: 'SIP:Alice@Example.COM:5060' }, a);
      expect(sip.body).toMatchObject({ address_type: 'sip_uri', address_normalized: 'sip:Alice@example.com', inbound_workflow_name: null });
      expect(sip.body).not.toHaveProperty('provider_sync');
      const ext = await svc.post(base(c.id), { address: 'Reception-2', is_active: false, extra_metadata: { floor: 2 } }, a);
      expect(ext.body).toMatchObject({ address_type: 'sip_extension', address_normalized: 'reception-2', is_active: false, extra_metadata: { floor: 2 } });
      const dup = await svc.post(base(c.id), { address: '+1 415 555 0142' }, a);
      expect(dup.status).toBe(409);
      expect(dup.body.code).toBe('phone_number_exists');
      // the same address under another configuration of the organization is still the same organization's number
      const c2 = await createConfig(a, { account_id: `acct-n2-${seq}` });
      expect((await svc.post(base(c2.id), { address: '+14155550142' }, a)).body.code).toBe('phone_number_exists');
      const bad = await svc.post(base(c.id), { address: '4155550142' }, a);
      expect(bad.status).toBe(422);
      expect(bad.body.detail[0].loc).toEqual(['body', 'address']);
      const list = await svc.get(base(c.id), a);
      expect(list.body.phone_numbers.map((n: { id: number }) => n.id)).toEqual([pstn.body.id, sip.body.id, ext.body.id]);
      expect(list.body.phone_numbers[0].inbound_workflow_name).toBe('Front desk');
      expect((await svc.get(`/organizations/telephony-configs/${c.id}`, a)).body.phone_number_count).toBe(3);
    });

    it('409 phone_number_conflict across organizations on the same provider account; another account is fine', async () => {
      const account = `shared-${++seq}`;
      const ca = await createConfig(a, { account_id: account });
      const cb = await createConfig(b, { account_id: account });
      const cb2 = await createConfig(b, { account_id: `${account}-b` });
      expect((await svc.post(base(ca.id), { address: '+14155550155' }, a)).status).toBe(200);
      const r = await svc.post(base(cb.id), { address: '+1 (415) 555-0155' }, b);
      expect(r.status).toBe(409);
      expect(r.body).toEqual({ detail: expect.any(String), code: 'phone_number_conflict' });
      expect((await svc.post(base(cb2.id), { address: '+14155550155' }, b)).status).toBe(200);
      // moving b's second configuration onto the shared account collides too
      const move = await svc.put(`/organizations/telephony-configs/${cb2.id}`, { config: { account_id: account } }, b);
      expect(move.status).toBe(409);
      expect(move.body.code).toBe('phone_number_conflict');
    });

    it('validates inbound_workflow_id: other organization → workflow_not_found, archived → workflow_archived', async () => {
      const c = await createConfig(a, { account_id: `acct-w-${++seq}` });
      const foreign = await createWorkflow(b);
      const archived = await createWorkflow(a);
      expect((await svc.put(`/workflow/${archived.id}/status`, { status: 'archived' }, a)).status).toBe(200);
      const r1 = await svc.post(base(c.id), { address: '+14155550160', inbound_workflow_id: foreign.id }, a);
      expect(r1.status).toBe(400);
      expect(r1.body.code).toBe('workflow_not_found');
      const r2 = await svc.post(base(c.id), { address: '+14155550160', inbound_workflow_id: archived.id }, a);
      expect(r2.status).toBe(400);
      expect(r2.body.code).toBe('workflow_archived');
      const n = (await svc.post(base(c.id), { address: '+14155550160' }, a)).body;
      const r3 = await svc.put(`${base(c.id)}/${n.id}`, { inbound_workflow_id: foreign.id }, a);
      expect(r3.status).toBe(400);
      expect(r3.body.code).toBe('workflow_not_found');
    });

    it('PUT: nulls change nothing, binding changes report provider_sync, clear unbinds, country_code renormalizes', async () => {
      const c = await createConfig(a, { account_id: `acct-p-${++seq}` });
      const w1 = await createWorkflow(a, 'W one');
      const w2 = await createWorkflow(a, 'W two');
      const n = (await svc.post(base(c.id), { address: '020 7183 8750', country_code: 'GB', label: 'London', inbound_workflow_id: w1.id }, a)).body;
      expect(n.address_normalized).toBe('+442071838750');
      const same = await svc.put(`${base(c.id)}/${n.id}`, { label: null, inbound_workflow_id: null, is_active: null, country_code: null }, a);
      expect(same.body).toMatchObject({ label: 'London', inbound_workflow_id: w1.id, is_active: true, country_code: 'GB' });
      expect(same.body).not.toHaveProperty('provider_sync');
      const change = await svc.put(`${base(c.id)}/${n.id}`, { inbound_workflow_id: w2.id, label: 'LDN' }, a);
      expect(change.body).toMatchObject({ inbound_workflow_id: w2.id, inbound_workflow_name: 'W two', label: 'LDN', provider_sync: { ok: true } });
      const cleared = await svc.put(`${base(c.id)}/${n.id}`, { clear_inbound_workflow: true }, a);
      expect(cleared.body).toMatchObject({ inbound_workflow_id: null, inbound_workflow_name: null, provider_sync: { ok: true, message: expect.stringContaining('detached') } });
      const local = (await svc.post(base(c.id), { address: '0612345678', country_code: 'NL' }, a)).body;
      expect(local.address_normalized).toBe('+31612345678');
      const moved = await svc.put(`${base(c.id)}/${local.id}`, { country_code: 'BE' }, a);
      expect(moved.body).toMatchObject({ country_code: 'BE', address: '0612345678' });
      expect(moved.body.address_normalized).not.toBe('+31612345678');
      expect((await svc.put(`${base(c.id)}/${local.id}`, { country_code: 'BEL' }, a)).status).toBe(422);
      expect((await svc.put(`${base(c.id)}/${local.id}`, { label: 'x'.repeat(65) }, a)).status).toBe(422);
    });

    it('one default caller id per configuration; delete reports provider_sync for a bound number; 404s across organizations', async () => {
      const c = await createConfig(a, { account_id: `acct-d-${++seq}` });
      const w = await createWorkflow(a);
      const n1 = (await svc.post(base(c.id), { address: '+14155550171', is_default_caller_id: true }, a)).body;
      const n2 = (await svc.post(base(c.id), { address: '+14155550172', inbound_workflow_id: w.id }, a)).body;
      expect(n1.is_default_caller_id).toBe(true);
      const set = await svc.post(`${base(c.id)}/${n2.id}/set-default-caller`, undefined, a);
      expect(set.body.is_default_caller_id).toBe(true);
      expect((await svc.get(`${base(c.id)}/${n1.id}`, a)).body.is_default_caller_id).toBe(false);
      for (const r of [
        await svc.get(`${base(c.id)}/${n1.id}`, b),
        await svc.put(`${base(c.id)}/${n1.id}`, { label: 'x' }, b),
        await svc.delete(`${base(c.id)}/${n1.id}`, b),
        await svc.post(`${base(c.id)}/${n1.id}/set-default-caller`, undefined, b),
        await svc.get(base(c.id), b),
        await svc.post(base(c.id), { address: '+14155550179' }, b),
      ]) expect(r.status).toBe(404);
      const other = await createConfig(a);
      const wrongParent = await svc.get(`${base(other.id)}/${n1.id}`, a);
      expect(wrongParent.status).toBe(404);
      expect(wrongParent.body.code).toBe('phone_number_not_found');
      expect((await svc.delete(`${base(c.id)}/${n1.id}`, a)).body).toEqual({ id: n1.id, deleted: true });
      expect((await svc.delete(`${base(c.id)}/${n2.id}`, a)).body).toEqual({ id: n2.id, deleted: true, provider_sync: { ok: true, message: expect.any(String) } });
      expect((await svc.get(`${base(c.id)}/${n2.id}`, a)).status).toBe(404);
    });
    it('a config change pushes the bound numbers\' inbound webhooks again (provider_sync); name-only changes do not', async () => {
      const c = await createConfig(a, { account_id: `acct-r-${++seq}` });
      const w = await createWorkflow(a);
      const cfg = `/organizations/telephony-configs/${c.id}`;
      // no bound number yet: nothing to push
      expect((await svc.put(cfg, { config: { ring_ms: 10 } }, a)).body).not.toHaveProperty('provider_sync');
      await svc.post(base(c.id), { address: '+14155550181' }, a);
      await svc.post(base(c.id), { address: '+14155550182', inbound_workflow_id: w.id }, a);
      const moved = await svc.put(cfg, { config: { account_id: `acct-r2-${seq}` } }, a);
      expect(moved.status).toBe(200);
      expect(moved.body.provider_sync).toEqual({ ok: true, message: 'Inbound webhook pushed to 1 number(s)' });
      expect((await svc.put(cfg, { name: `renamed ${seq}` }, a)).body).not.toHaveProperty('provider_sync');
      // the number moved with its configuration's account: inbound calls on the new account reach it
      const inbound = await svc.post('/telephony/simulator/inbound', { account_id: `acct-r2-${seq}`, from: '+14155550999', to: '+14155550182' }, a);
      expect(inbound.status).toBe(200);
      expect(inbound.body).toEqual({ run_id: expect.any(Number) });
    });
  });

  describe('simulator inbound and provider webhooks (API.md section 8)', () => {
    const waitForRun = async (auth: Auth, workflowId: number, runId: number, pred: (r: any) => boolean) => {
      const start = Date.now();
      for (;;) {
        const r = await svc.get(`/workflow/${workflowId}/runs/${runId}`, auth);
        if (r.status === 200 && pred(r.body)) return r.body;
        if (Date.now() - start > 5000) throw new Error(`run ${runId} never matched: ${r.text}`);
        await new Promise((res) => setTimeout(res, 10));
      }
    };

    it('answers an inbound test call with a run that plays through the status path', async () => {
      const account = `acct-in-${++seq}`;
      const c = await createConfig(a, { account_id: account, ring_ms: 0, talk_ms: 20 });
      const w = await createWorkflow(a);
      await svc.post(`/organizations/telephony-configs/${c.id}/phone-numbers`, { address: '+14155550180', inbound_workflow_id: w.id }, a);
      const r = await svc.post('/telephony/simulator/inbound', { account_id: account, from: '+15550009999', to: '+1 415 555 0180' }, a);
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ run_id: expect.any(Number) });
      const run = await waitForRun(a, w.id, r.body.run_id, (x) => x.status === 'completed');
      expect(run).toMatchObject({
        mode: 'inbound', is_completed: true, disposition: 'completed', duration_seconds: 0.02,
        initial_context: expect.objectContaining({ caller_number: '+15550009999', called_number: '+1 415 555 0180' }),
        gathered_context: expect.objectContaining({ mapped_call_disposition: 'completed' }),
        cost_info: expect.objectContaining({ call_duration_seconds: 0.02 }),
      });
      // another organization cannot see it
      expect((await svc.get(`/workflow/${w.id}/runs/${r.body.run_id}`, b)).status).toBe(404);
    });

    it('404 phone_number_not_found for unknown, unbound or inactive numbers; 409 workflow_archived', async () => {
      const account = `acct-in2-${++seq}`;
      const c = await createConfig(a, { account_id: account });
      const w = await createWorkflow(a);
      const base = `/organizations/telephony-configs/${c.id}/phone-numbers`;
      await svc.post(base, { address: '+14155550181' }, a);
      await svc.post(base, { address: '+14155550182', inbound_workflow_id: w.id, is_active: false }, a);
      await svc.post(base, { address: '+14155550183', inbound_workflow_id: w.id }, a);
      for (const to of ['+14155550189', '+14155550181', '+14155550182']) {
        const r = await svc.post('/telephony/simulator/inbound', { account_id: account, from: '+1555', to }, a);
        expect(r.status).toBe(404);
        expect(r.body.code).toBe('phone_number_not_found');
      }
      // the right number on the wrong account is not found either
      expect((await svc.post('/telephony/simulator/inbound', { account_id: 'someone-else', from: '+1555', to: '+14155550183' }, a)).status).toBe(404);
      await svc.put(`/workflow/${w.id}/status`, { status: 'archived' }, a);
      const archived = await svc.post('/telephony/simulator/inbound', { account_id: account, from: '+1555', to: '+14155550183' }, a);
      expect(archived.status).toBe(409);
      expect(archived.body.code).toBe('workflow_archived');
    });

    it('verifies webhooks (403 signature_invalid), ignores unknown events with a reason, applies status callbacks idempotently', async () => {
      const account = `acct-sig-${++seq}`;
      const c = await createConfig(a, { account_id: account, api_key: 'hook-key-12345', ring_ms: 60_000 });
      const w = await createWorkflow(a);
      await svc.post(`/organizations/telephony-configs/${c.id}/phone-numbers`, { address: '+14155550184', inbound_workflow_id: w.id }, a);
      const body = { account_id: account, from: '+1555', to: '+14155550184', call_id: 'sim-in-fixed-1' };
      const denied = await svc.post('/telephony/simulator/inbound', body, a);
      expect(denied.status).toBe(403);
      expect(denied.body).toEqual({ detail: expect.any(String), code: 'signature_invalid' });
      const hdr = { 'content-type': 'application/json', 'x-simulator-key': 'hook-key-12345', authorization: `Bearer ${a.token}` };
      const ok = await svc.request('POST', '/telephony/simulator/inbound', { rawBody: JSON.stringify({ ...body, to: '+14155550184' }), headers: hdr });
      expect(ok.status).toBe(200);
      const runId = ok.body.run_id as number;
      // the provider retrying the same inbound webhook gets the same run
      const again = await svc.request('POST', '/telephony/simulator/inbound', { rawBody: JSON.stringify(body), headers: hdr });
      expect(again.body.run_id).toBe(runId);
      const status = (event: unknown, headers: Record<string, string> = hdr) =>
        svc.request('POST', `/telephony/simulator/status/${runId}`, { rawBody: JSON.stringify({ event, call_id: 'sim-in-fixed-1', duration_seconds: 3 }), headers });
      expect((await status('completed', { 'content-type': 'application/json', authorization: `Bearer ${a.token}` })).status).toBe(403);
      const ignored = await status('transferred');
      expect(ignored.status).toBe(200);
      expect(ignored.body).toEqual({ received: true, applied: false, ignored: expect.stringContaining('transferred') });
      expect((await status('completed')).body).toEqual({ received: true, applied: true });
      expect((await status('completed')).body).toEqual({ received: true, applied: false });
      // never backwards
      expect((await status('ringing')).body).toEqual({ received: true, applied: false });
      const run = await waitForRun(a, w.id, runId, (x) => x.is_completed);
      expect(run).toMatchObject({ status: 'completed', disposition: 'completed', duration_seconds: 3 });
      // form-encoded callbacks parse too
      const form = await svc.request('POST', `/telephony/simulator/status/${runId}`, { rawBody: 'event=busy&call_id=x', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-simulator-key': 'hook-key-12345' }, auth: a });
      expect(form.body).toEqual({ received: true, applied: false });
      expect((await svc.request('POST', '/telephony/nope/status/1', { rawBody: '{}', headers: hdr })).status).toBe(404);
      expect((await svc.request('POST', '/telephony/simulator/status/99999999', { rawBody: '{}', headers: hdr })).status).toBe(404);
      expect(svc.logs.join('\n')).toContain('status webhook ignored');
      expect(svc.logs.join('\n')).not.toContain('hook-key-12345');
    });

    it('takes the API credentials of the organization owning the configuration: none 401, another organization\'s 404 (no api_key set)', async () => {
      const account = `acct-auth-${++seq}`;
      const c = await createConfig(a, { account_id: account, ring_ms: 0, talk_ms: 600_000 });
      const w = await createWorkflow(a);
      await svc.post(`/organizations/telephony-configs/${c.id}/phone-numbers`, { address: '+14155550185', inbound_workflow_id: w.id }, a);
      const call = { account_id: account, from: '+1555', to: '+14155550185', call_id: `sim-auth-${seq}` };
      const anonymous = await svc.post('/telephony/simulator/inbound', call);
      expect(anonymous).toMatchObject({ status: 401, body: { code: 'not_authenticated', detail: expect.any(String) } });
      expect((await svc.post('/telephony/simulator/inbound', call, { token: 'forged' })).body.code).toBe('invalid_credentials');
      const otherOrg = await svc.post('/telephony/simulator/inbound', call, b);
      expect(otherOrg).toMatchObject({ status: 404, body: { code: 'phone_number_not_found' } });
      // an API key of the owning organization works like its session token
      const key = (await svc.post('/user/api-keys', { name: 'sim' }, a)).body.api_key as string;
      const ok = await svc.post('/telephony/simulator/inbound', call, { apiKey: key });
      expect(ok.status).toBe(200);
      const runId = ok.body.run_id as number;
      await waitForRun(a, w.id, runId, (x) => x.status === 'in_progress');

      const post = (body: Record<string, unknown>, auth?: Auth | { apiKey: string }) => svc.post(`/telephony/simulator/status/${runId}`, body, auth);
      const done = { event: 'completed', call_id: call.call_id, duration_seconds: 99_999_999 };
      expect(await post(done)).toMatchObject({ status: 401, body: { code: 'not_authenticated' } });
      expect(await post(done, b)).toMatchObject({ status: 404, body: { code: 'run_not_found' } });
      // duration_seconds is 0..86400 (API.md 8): 422 on the field, nothing applied
      for (const bad of [99_999_999, 86_401, -1, 'soon', '1e400', true]) {
        const r = await post({ ...done, duration_seconds: bad }, a);
        expect(r.status).toBe(422);
        expect(r.body.detail[0]).toMatchObject({ loc: ['body', 'duration_seconds'] });
      }
      expect((await svc.get(`/workflow/${w.id}/runs/${runId}`, a)).body.status).toBe('in_progress');
      // another call's event is not this run's, even from its own organization
      expect((await post({ ...done, call_id: 'sim-someone-else', duration_seconds: 5 }, a)).body).toEqual({ received: true, applied: false });
      expect((await post({ ...done, duration_seconds: 86_400 }, { apiKey: key })).body).toEqual({ received: true, applied: true });
      const run = (await svc.get(`/workflow/${w.id}/runs/${runId}`, a)).body;
      expect(run).toMatchObject({ status: 'completed', duration_seconds: 86_400, cost_info: expect.objectContaining({ call_duration_seconds: 86_400 }) });
    });
  });
});
