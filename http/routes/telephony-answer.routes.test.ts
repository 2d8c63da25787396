/**
 * `POST /api/v1/telephony/{provider}/answer/{run_id}` through the running service (the generic outbound answer
 * route that replaced the Twilio-only one): Twilio's URL and TwiML unchanged, signatures, 403/404 rules.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { RunRepository } from '../../core/ports/run.repository.port.js';
import { exampleWorkflowDefinition } from '../../core/workflows/example-definition.js';
import { computeTwilioSignature } from '../../providers/twilio/twilio-signature.js';
import { startTestService, type TestService } from '../../test/support/test-service.js';

const PUBLIC = 'https://cp.example.test';
const ACCOUNT_SID = `AC${'a1'.repeat(16)}`;
const AUTH_TOKEN = 'twilio-auth-token-0123456789';

describe('POST /telephony/{provider}/answer/{run_id}', () => {
  let svc: TestService;
  let orgId: number;
  let twilioRun: number;
  let simulatorRun: number;

  beforeAll(async () => {
    svc = await startTestService({ env: { CALLPLANE_PUBLIC_URL: PUBLIC } });
    const user = await svc.signup();
    orgId = user.organizationId;
    const auth = { token: user.token };
    const wf = (await svc.post('/workflow/create/definition', { name: 'wf', workflow_definition: exampleWorkflowDefinition }, auth)).body;
    const twilioCfg = (await svc.post('/organizations/telephony-configs', { name: 'Twilio', config: { provider: 'twilio', account_sid: ACCOUNT_SID, auth_token: AUTH_TOKEN } }, auth)).body.id;
    const simCfg = (await svc.post('/organizations/telephony-configs', { name: 'Sim', config: { provider: 'simulator' } }, auth)).body.id;
    const runs = svc.container.get<RunRepository>(RunRepository);
    const create = (provider: string, cfg: number) => runs.create(orgId, {
      workflowId: wf.id, definitionId: wf.current_definition_id, name: 'call', mode: 'outbound', telephonyConfigurationId: cfg, provider,
      calledNumber: '+15557654321', initialContext: {}, now: new Date(),
    });
    twilioRun = (await create('twilio', twilioCfg)).id;
    simulatorRun = (await create('simulator', simCfg)).id;
  });
  afterAll(async () => {
    await svc?.close();
  });

  async function post(path: string, form: Record<string, string>, signature?: string) {
    const url = `/api/v1${path}`;
    return svc.request('POST', url, {
      rawBody: new URLSearchParams(form).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature ?? computeTwilioSignature(AUTH_TOKEN, PUBLIC + url, form) },
    });
  }
  const form = () => ({ AccountSid: ACCOUNT_SID, CallSid: 'CA0123', CallStatus: 'in-progress', Direction: 'outbound-api' });

  it("keeps Twilio's answer URL: signed TwiML streaming to the run's media WebSocket with a media token", async () => {
    const r = await post(`/telephony/twilio/answer/${twilioRun}`, form());
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/text\/xml/);
    expect(r.text).toMatch(new RegExp(
      `<Connect><Stream url="wss://cp\\.example\\.test/api/v1/telephony/twilio/media/${twilioRun}"><Parameter name="run_id" value="${twilioRun}"/><Parameter name="token" value="\\d+\\.[0-9a-f]{64}"/></Stream></Connect>`,
    ));
    const machine = await post(`/telephony/twilio/answer/${twilioRun}`, { ...form(), AnsweredBy: 'machine_start' });
    expect(machine.text).toContain('<Hangup/>');
  });

  it('refuses a bad signature, an unknown run and a run of another provider with 403 signature_invalid', async () => {
    for (const r of [
      await post(`/telephony/twilio/answer/${twilioRun}`, form(), 'AAAA'),
      await post(`/telephony/twilio/answer/${twilioRun}`, { ...form(), CallStatus: 'tampered' }, computeTwilioSignature(AUTH_TOKEN, `${PUBLIC}/api/v1/telephony/twilio/answer/${twilioRun}`, form())),
      await post('/telephony/twilio/answer/987654', form()),
      await post(`/telephony/twilio/answer/${simulatorRun}`, form()),
    ]) {
      expect(r.status).toBe(403);
      expect(r.body).toEqual({ detail: 'The webhook signature does not match', code: 'signature_invalid' });
    }
  });

  it('answers 404 for an unknown provider and for a provider whose calls take no answer URL', async () => {
    const unknown = await post(`/telephony/acmetel/answer/${twilioRun}`, form());
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ code: 'provider_not_found' });
    const sim = await post(`/telephony/simulator/answer/${simulatorRun}`, form());
    expect(sim.status).toBe(404);
    expect(sim.body).toMatchObject({ code: 'outbound_answer_not_supported' });
  });

  it('validates the path: a run id that is not a positive integer is 422', async () => {
    const r = await post('/telephony/twilio/answer/abc', form());
    expect(r.status).toBe(422);
  });

  it('is listed once in the OpenAPI document, generic over the provider', async () => {
    const doc = (await svc.get('/openapi.json')).body;
    expect(doc.paths['/api/v1/telephony/{provider}/answer/{run_id}']?.post?.operationId).toBe('providerAnswerOutboundCall');
    expect(doc.paths['/api/v1/telephony/twilio/answer/{run_id}']).toBeUndefined();
  });
});
