import { randomUUID } from 'node:crypto';
import { parseCallerScript } from '../../core/ports/simulated-callers.port.js';
import { defineProviderPlugin, ValidationError, type InboundRefusal, type ProviderMarkup, type WebhookRequest } from '../../plugins/sdk.js';
import { simulatorManifest } from './simulator.manifest.js';
import { SimulatorProvider, simulatorConfig } from './simulator.provider.js';

const REFUSALS: Record<InboundRefusal, { status: number; detail: string }> = {
  phone_number_not_found: { status: 404, detail: 'No active number bound to an active workflow answers at this address' },
  workflow_archived: { status: 409, detail: 'The workflow bound to this number is archived' },
};

/** The simulator provider of API.md section 8: no real calls, outcome by the called number's last two digits. */
export default defineProviderPlugin({
  manifest: simulatorManifest,
  deriveAccountId: (config) => simulatorConfig(config).accountId,
  create: (config, context) => new SimulatorProvider(simulatorConfig(config), context),
  /**
   * The simulator's webhooks are an API of ours, not a carrier's: anyone could post them, so they take the API
   * credentials of the organization owning the configuration (API.md section 8).
   */
  webhookAuth: 'organization-credentials',
  /**
   * The test endpoint `POST /api/v1/telephony/simulator/inbound {account_id, from, to, call_id?, caller?}`;
   * `caller: {lines, persona?}` brings a simulated caller (API.md 13), a malformed one is 422 at `caller`.
   */
  parseInboundCall(request: WebhookRequest) {
    const body = request?.body && typeof request.body === 'object' ? (request.body as Record<string, unknown>) : {};
    const to = typeof body.to === 'string' ? body.to.trim() : '';
    if (!to) return { ignored: 'missing "to"' };
    const from = typeof body.from === 'string' ? body.from.trim() : '';
    const accountId = typeof body.account_id === 'string' && body.account_id ? body.account_id : 'simulator';
    const callId = typeof body.call_id === 'string' && body.call_id ? body.call_id : `sim-in-${randomUUID()}`;
    const caller = parseCallerScript(body.caller);
    if (caller && 'error' in caller) throw new ValidationError([{ loc: ['body', 'caller'], msg: caller.error, type: 'value_error' }]);
    return { providerCallId: callId, from, to, accountId, ...(caller ? { caller } : {}) };
  },
  inboundReject(reason: InboundRefusal): ProviderMarkup {
    const r = REFUSALS[reason] ?? REFUSALS.phone_number_not_found;
    return { status: r.status, contentType: 'application/json', body: JSON.stringify({ detail: r.detail, code: reason in REFUSALS ? reason : 'phone_number_not_found' }) };
  },
});
