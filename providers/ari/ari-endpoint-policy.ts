/**
 * Which `ari_endpoint` URLs the server may connect to (SSRF): the SDK's outbound network policy
 * (plugins/network-policy.ts) applied to the `ari_endpoint` field. At save time (`checkAriEndpoint`) the URL is
 * checked as written; every connection (`ariPolicy` given to `assertConnectable`/`policyFetch` in ari.client.ts)
 * resolves the host and checks each address right before connecting, and never follows a redirect.
 */
import { checkUrlShape, type HostResolver, type NetworkPolicyOptions } from '../../plugins/sdk.js';

/** The policy options of an ARI endpoint (`ws`/`wss` for the event socket when `websocket`). */
export function ariPolicy(opts: { allowPrivateNetwork: boolean; resolve?: HostResolver; websocket?: boolean }): NetworkPolicyOptions {
  return {
    allowPrivateNetwork: opts.allowPrivateNetwork,
    field: 'ari_endpoint',
    label: 'ARI endpoint',
    ...(opts.websocket ? { protocols: ['ws:', 'wss:'] } : {}),
    ...(opts.resolve ? { resolve: opts.resolve } : {}),
  };
}

/** Issues as `[field, message]` (empty when the endpoint is acceptable as written). */
export function checkAriEndpoint(endpoint: unknown, opts: { allowPrivateNetwork: boolean }): Array<[string, string]> {
  return checkUrlShape(endpoint, ariPolicy(opts)).map(([field, message]): [string, string] => [
    field,
    /credentials/.test(message) ? 'ari_endpoint must not carry credentials; use app_name and app_password' : message,
  ]);
}
