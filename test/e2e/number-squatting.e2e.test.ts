/**
 * Number ownership through the running service and the Twilio fake (issue 10 item 6, API.md section 5): a
 * configuration's credentials are checked with the provider when it is created or its credentials change
 * (`credentials_check`, persisted), and another organization's claim made with credentials that never checked
 * ok gives way to a configuration whose credentials did.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PhoneNumberRepository } from '../../core/ports/phone-number.repository.port.js';
import { exampleWorkflowDefinition } from '../../core/workflows/example-definition.js';
import { ProviderRegistry } from '../../plugins/provider-registry.js';
import simulator from '../../providers/simulator/index.js';
import { createTwilioPlugin } from '../../providers/twilio/index.js';
import { FakeTwilioServer } from '../fakes/twilio/fake-twilio-server.js';
import { startTestService, type TestService } from '../support/test-service.js';

const VICTIM_NUMBER = '+15550001111';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;

describe('number squatting: credentials checks and unproven claims', () => {
  let fake: FakeTwilioServer;
  let svc: TestService;
  let dataDir: string;

  const twilioConfig = (authToken: string) => ({ provider: 'twilio', account_sid: fake.accountSid, auth_token: authToken });
  const madeUpToken = () => 'f'.repeat(32);

  async function organization(name: string) {
    const user = await svc.signup(`${name}@example.test`, 'correct horse battery', name);
    return { auth: { token: user.token }, organizationId: user.organizationId };
  }

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'callplane-squat-'));
    fake = await FakeTwilioServer.start({ numbers: [{ phoneNumber: VICTIM_NUMBER }] });
    const providers = ProviderRegistry.builtIn({ allowPrivateNetwork: true }, [createTwilioPlugin({ apiBaseUrl: fake.url, client: { sleep: async () => undefined } }), simulator]);
    svc = await startTestService({ env: { CALLPLANE_PUBLIC_URL: 'https://cp.example.test', CALLPLANE_DATA_DIR: dataDir }, providers });
  });
  afterAll(async () => {
    await svc?.close();
    await fake?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("lets the account's proven owner take a number squatted with a made-up token; the unproven claim is detached", async () => {
    // the attacker knows the victim's public account SID, not the auth token
    const attacker = await organization('attacker');
    const squat = await svc.post('/organizations/telephony-configs', { name: 'Borrowed', config: twilioConfig(madeUpToken()) }, attacker.auth);
    expect(squat.status).toBe(200);
    expect(squat.body.credentials_check).toEqual({ ok: false, message: expect.stringContaining('HTTP 401'), checked_at: expect.stringMatching(ISO) });
    expect(JSON.stringify(squat.body.credentials_check)).not.toContain(fake.authToken);
    // saved either way, and the check is stored with it
    expect((await svc.get(`/organizations/telephony-configs/${squat.body.id}`, attacker.auth)).body.credentials_check).toEqual(squat.body.credentials_check);
    const squatted = await svc.post(`/organizations/telephony-configs/${squat.body.id}/phone-numbers`, { address: VICTIM_NUMBER, label: 'mine now' }, attacker.auth);
    expect(squatted.status).toBe(200);

    // the victim's own configuration proves the account, so the number is theirs (it was a 409 before)
    const victim = await organization('victim');
    const own = await svc.post('/organizations/telephony-configs', { name: 'Twilio', config: twilioConfig(fake.authToken) }, victim.auth);
    expect(own.status).toBe(200);
    expect(own.body.credentials_check).toEqual({ ok: true, message: expect.stringContaining(fake.accountSid), checked_at: expect.stringMatching(ISO) });
    const accountReads = fake.requests.filter((r) => r.method === 'GET' && r.path === `/2010-04-01/Accounts/${fake.accountSid}.json`);
    expect(accountReads.map((r) => r.status)).toEqual([401, 200]);
    const claimed = await svc.post(`/organizations/telephony-configs/${own.body.id}/phone-numbers`, { address: VICTIM_NUMBER }, victim.auth);
    expect(claimed.status).toBe(200);
    expect(claimed.body).toMatchObject({ address_normalized: VICTIM_NUMBER });

    // the attacker's claim is gone; calls to the number now find the victim's configuration
    expect((await svc.get(`/organizations/telephony-configs/${squat.body.id}/phone-numbers`, attacker.auth)).body.phone_numbers).toEqual([]);
    expect((await svc.get(`/organizations/telephony-configs/${squat.body.id}/phone-numbers/${squatted.body.id}`, attacker.auth)).status).toBe(404);
    const holder = await svc.container.get<PhoneNumberRepository>(PhoneNumberRepository).findForInbound('twilio', fake.accountSid, VICTIM_NUMBER);
    expect(holder).toMatchObject({ organizationId: victim.organizationId, telephonyConfigurationId: own.body.id });

    // an unproven claim never displaces a proven one
    const again = await svc.post(`/organizations/telephony-configs/${squat.body.id}/phone-numbers`, { address: VICTIM_NUMBER }, attacker.auth);
    expect(again).toMatchObject({ status: 409, body: { code: 'phone_number_conflict' } });
    // between two proven claims the first one stands
    const partner = await organization('partner');
    const shared = await svc.post('/organizations/telephony-configs', { name: 'Shared', config: twilioConfig(fake.authToken) }, partner.auth);
    expect(shared.body.credentials_check.ok).toBe(true);
    const second = await svc.post(`/organizations/telephony-configs/${shared.body.id}/phone-numbers`, { address: VICTIM_NUMBER }, partner.auth);
    expect(second).toMatchObject({ status: 409, body: { code: 'phone_number_conflict' } });
  });

  it('between two unproven claims the first one stands', async () => {
    const number = '+15550004444';
    const first = await organization('first-squatter');
    const a = await svc.post('/organizations/telephony-configs', { name: 'A', config: twilioConfig(madeUpToken()) }, first.auth);
    expect(a.body.credentials_check.ok).toBe(false);
    expect((await svc.post(`/organizations/telephony-configs/${a.body.id}/phone-numbers`, { address: number }, first.auth)).status).toBe(200);
    const other = await organization('second-squatter');
    const b = await svc.post('/organizations/telephony-configs', { name: 'B', config: twilioConfig('e'.repeat(32)) }, other.auth);
    expect(b.body.credentials_check.ok).toBe(false);
    const refused = await svc.post(`/organizations/telephony-configs/${b.body.id}/phone-numbers`, { address: number }, other.auth);
    expect(refused).toMatchObject({ status: 409, body: { code: 'phone_number_conflict' } });
    expect((await svc.get(`/organizations/telephony-configs/${a.body.id}/phone-numbers`, first.auth)).body.phone_numbers).toHaveLength(1);
  });

  it('checks again when the credentials change (or are sent again after a failed check), not on a rename', async () => {
    const org = await organization('fixer');
    const created = await svc.post('/organizations/telephony-configs', { name: 'Typo', config: twilioConfig(madeUpToken()) }, org.auth);
    expect(created.body.credentials_check.ok).toBe(false);
    const reads = () => fake.requests.filter((r) => r.path === `/2010-04-01/Accounts/${fake.accountSid}.json`).length;
    const before = reads();
    const renamed = await svc.put(`/organizations/telephony-configs/${created.body.id}`, { name: 'Renamed' }, org.auth);
    expect(renamed.body.credentials_check).toEqual(created.body.credentials_check);
    expect(reads()).toBe(before);
    const fixed = await svc.put(`/organizations/telephony-configs/${created.body.id}`, { config: { auth_token: fake.authToken } }, org.auth);
    expect(fixed.status).toBe(200);
    expect(fixed.body.credentials_check).toMatchObject({ ok: true });
    expect(reads()).toBe(before + 1);
    // unchanged credentials that already passed are not asked about again
    const same = await svc.put(`/organizations/telephony-configs/${created.body.id}`, { config: { auth_token: fixed.body.credentials.auth_token } }, org.auth);
    expect(same.body.credentials_check).toEqual(fixed.body.credentials_check);
    expect(reads()).toBe(before + 1);
    expect((await svc.get('/organizations/telephony-configs', org.auth)).body.configurations[0].credentials_check).toEqual(fixed.body.credentials_check);
  });

  it('passes the simulator at once', async () => {
    const org = await organization('simulated');
    const wf = await svc.post('/workflow/create/definition', { name: 'Agent', workflow_definition: exampleWorkflowDefinition }, org.auth);
    expect(wf.status).toBe(200);
    const sim = await svc.post('/organizations/telephony-configs', { name: 'Sim', config: { provider: 'simulator', account_id: 'squat-sim' } }, org.auth);
    expect(sim.body.credentials_check).toEqual({ ok: true, message: expect.any(String), checked_at: expect.stringMatching(ISO) });
  });
});
