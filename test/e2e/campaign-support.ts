import { exampleWorkflowDefinition } from '../../core/workflows/example-definition.js';
import type { Credentials } from '../support/test-service.js';

/** What campaign tests need from a running service: a JSON client and raw requests. */
export interface CampaignApi {
  url: string;
  get<T = any>(path: string, auth?: Credentials): Promise<{ status: number; body: T }>;
  post<T = any>(path: string, body?: unknown, auth?: Credentials): Promise<{ status: number; body: T }>;
}

/** A JSON client of the API at `url` (for services running as their own processes). */
export function apiClient(url: string): CampaignApi {
  const call = async (method: string, path: string, body: unknown, token?: string) => {
    const headers: Record<string, string> = {};
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const r = await fetch(`${url}/api/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : null };
  };
  return { url, get: (p, a) => call('GET', p, undefined, a?.token), post: (p, b, a) => call('POST', p, b, a?.token) };
}

export async function createWorkflow(api: CampaignApi, auth: Credentials, name = 'Agent'): Promise<number> {
  const r = await api.post('/workflow/create/definition', { name, workflow_definition: exampleWorkflowDefinition }, auth);
  if (r.status !== 200) throw new Error(`workflow: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.id;
}

export async function createSimulatorConfig(api: CampaignApi, auth: Credentials, opts: { ringMs?: number; talkMs?: number; name?: string; isDefault?: boolean } = {}): Promise<number> {
  const r = await api.post('/organizations/telephony-configs', {
    name: opts.name ?? 'Sim', is_default_outbound: opts.isDefault ?? true,
    config: { provider: 'simulator', ring_ms: opts.ringMs ?? 0, talk_ms: opts.talkMs ?? 0 },
  }, auth);
  if (r.status !== 200) throw new Error(`config: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.id;
}

/** Presigns and PUTs `csv`; returns the file_key. */
export async function uploadCsv(api: CampaignApi, auth: Credentials, csv: string, fileName = 'contacts.csv'): Promise<string> {
  const size = Buffer.byteLength(csv);
  const p = await api.post('/s3/presigned-upload-url', { file_name: fileName, file_size: size }, auth);
  if (p.status !== 200) throw new Error(`presign: ${p.status} ${JSON.stringify(p.body)}`);
  const put = await fetch(p.body.upload_url.replace(/^https?:\/\/[^/]+/, api.url), { method: 'PUT', headers: { 'content-type': 'text/csv' }, body: csv });
  if (put.status !== 200) throw new Error(`put: ${put.status} ${await put.text()}`);
  return p.body.file_key;
}

/** A CSV of `n` numbers whose last two digits follow `suffix(i)`. */
export function csvOf(n: number, suffix: (i: number) => string = (i) => String(10 + (i % 90)).padStart(2, '0')): string {
  const rows = ['phone_number,first_name'];
  for (let i = 0; i < n; i++) rows.push(`+1555${String(i).padStart(5, '0')}${suffix(i)},P${i}`);
  return rows.join('\n') + '\n';
}

export async function waitFor(predicate: () => Promise<boolean> | boolean, timeoutMs = 15_000, stepMs = 20): Promise<void> {
  const started = Date.now();
  for (;;) {
    if (await predicate()) return;
    if (Date.now() - started > timeoutMs) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, stepMs));
  }
}
