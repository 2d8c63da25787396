import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestService, type Credentials, type TestService } from '../support/test-service.js';
import { createWorkflow } from './campaign-support.js';

/**
 * The attack sweep (issue 10): every operation of the service's own OpenAPI document gets malformed JSON, an
 * empty body, bodies of the wrong shape (every field of every wrong type, one field at a time, nested too deep),
 * huge, negative and non-numeric path ids, huge and negative page/limit and odd query values, with valid
 * credentials; and without credentials. Nothing may answer 5xx; a protected operation without credentials
 * answers 401. Failures are listed together, one line per request, so one run shows every hole.
 */

type Schema = Record<string, any>;
interface Operation {
  method: string;
  path: string;
  secured: boolean;
  params: { name: string; in: string; schema?: Schema }[];
  body?: Schema;
  jsonBody: boolean;
}
interface Probe {
  label: string;
  path: string;
  query?: string;
  body?: string;
  contentType?: string;
  auth?: Credentials;
}

const HUGE_IDS = ['99999999999999999999', '9223372036854775808', '9007199254740993', '-1', '-99999999999999999999', '0', '1e300', '1.5', 'abc', '%00', 'x'.repeat(600)];
const WRONG_VALUES: unknown[] = [12345, -1, 1e300, 'x', '', 'x'.repeat(10_000), {}, [], [1, 'a', null], null, true];
const nested = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
const nestedObject = (levels: number): unknown => {
  let v: unknown = 1;
  for (let i = 0; i < levels; i++) v = { a: v };
  return v;
};

/** Every property name a body schema names, at the top level and inside unions and object properties (one level). */
function propertiesOf(schema: Schema | undefined, depth = 0): { path: string[]; schema: Schema }[] {
  if (!schema || typeof schema !== 'object') return [];
  const out: { path: string[]; schema: Schema }[] = [];
  for (const branch of [schema, ...(schema.oneOf ?? []), ...(schema.anyOf ?? []), ...(schema.allOf ?? [])] as Schema[]) {
    for (const [name, sub] of Object.entries<Schema>(branch.properties ?? {})) {
      out.push({ path: [name], schema: sub });
      if (depth < 1) for (const inner of propertiesOf(sub, depth + 1)) out.push({ path: [name, ...inner.path], schema: inner.schema });
    }
  }
  const seen = new Set<string>();
  return out.filter((p) => !seen.has(p.path.join('.')) && seen.add(p.path.join('.')));
}

/** A value of a type the property does not take. */
function wrongFor(schema: Schema): unknown[] {
  const types = new Set<string>([schema.type, ...((schema.anyOf ?? schema.oneOf ?? []) as Schema[]).map((s) => s.type)].flat().filter(Boolean));
  const candidates: unknown[] = [];
  if (!types.has('string')) candidates.push('not-the-right-type');
  if (!types.has('integer') && !types.has('number')) candidates.push(42);
  if (!types.has('object')) candidates.push({ unexpected: true });
  if (!types.has('array')) candidates.push([1, 2]);
  if (!types.has('boolean')) candidates.push(false);
  candidates.push(nestedObject(40));
  return candidates;
}

/** A value the schema accepts, as far as a simple reading of it goes (so a mutated field is the only thing wrong). */
function sample(schema: Schema | undefined, depth = 0): unknown {
  if (!schema || depth > 6) return null;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if ('default' in schema) return schema.default;
  const union = (schema.oneOf ?? schema.anyOf) as Schema[] | undefined;
  if (union) return sample(union.find((b) => b.type !== 'null') ?? union[0], depth + 1);
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'object':
      return Object.fromEntries(Object.entries<Schema>(schema.properties ?? {}).map(([k, v]) => [k, sample(v, depth + 1)]));
    case 'array':
      return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => sample(schema.items, depth + 1));
    case 'string':
      if (schema.format === 'date-time') return '2026-03-01T10:00:00Z';
      if (schema.format === 'uri') return 'https://example.com/x';
      return 'a'.repeat(Math.max(1, schema.minLength ?? 1));
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return true;
    default:
      return {};
  }
}

/** `base` with the value at `path` replaced (base is not changed). */
function setAt(base: unknown, path: string[], value: unknown): unknown {
  const copy = structuredClone(typeof base === 'object' && base !== null && !Array.isArray(base) ? base : {}) as Record<string, unknown>;
  let at = copy;
  for (const key of path.slice(0, -1)) {
    if (typeof at[key] !== 'object' || at[key] === null || Array.isArray(at[key])) at[key] = {};
    at = at[key] as Record<string, unknown>;
  }
  at[path[path.length - 1]!] = value;
  return copy;
}

function operationsOf(doc: any): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      ops.push({
        method: method.toUpperCase(), path: path.replace(/^\/api\/v1/, ''), secured: Array.isArray(op.security) && op.security.length > 0,
        params: op.parameters ?? [], body: op.requestBody?.content?.['application/json']?.schema,
        jsonBody: op.requestBody?.content?.['application/json'] !== undefined,
      });
    }
  }
  return ops;
}

/** A plausible value for a path parameter: an existing id, or a string the route knows. */
function plausible(param: { schema?: Schema }): string {
  const s = param.schema ?? {};
  if (s.type === 'integer' || s.type === 'number') return '1';
  if (Array.isArray(s.enum) && s.enum.length > 0) return String(s.enum[0]);
  return 'simulator';
}

const fill = (path: string, values: (name: string) => string) => path.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(values(name)));

function probesFor(op: Operation, auth: Credentials): Probe[] {
  const pathParams = op.params.filter((p) => p.in === 'path');
  const queryParams = op.params.filter((p) => p.in === 'query');
  const path = fill(op.path, (name) => plausible(pathParams.find((p) => p.name === name) ?? {}));
  const json = 'application/json';
  const probes: Probe[] = [];
  const sendsBody = op.method !== 'GET';
  const withBody = (label: string, body: unknown): Probe => ({ label, path, body: JSON.stringify(body), contentType: json, auth });

  for (const id of pathParams.length > 0 ? HUGE_IDS : []) {
    probes.push({ label: `path ${id.slice(0, 24)}`, path: fill(op.path, () => id), ...(op.jsonBody ? { body: '{}', contentType: json } : {}), auth });
  }
  probes.push({ label: 'no body', path, auth });
  if (sendsBody) {
    probes.push({ label: 'malformed JSON', path, body: '{"a": [1, 2', contentType: json, auth });
    probes.push({ label: 'empty JSON body', path, body: '', contentType: json, auth });
    probes.push({ label: 'JSON not sent as JSON', path, body: '{"name":"x"}', contentType: 'text/plain', auth });
    probes.push({ label: 'form body', path, body: 'a=1&b[c]=2', contentType: 'application/x-www-form-urlencoded', auth });
    probes.push({ label: 'deeply nested JSON', path, body: nested(5000), contentType: json, auth });
    for (const v of [[], 'text', 123, null, true]) probes.push(withBody(`body ${JSON.stringify(v)}`, v));
  }
  if (op.jsonBody) {
    const props = propertiesOf(op.body);
    // each field wrong in an otherwise plausible body, so the handler and core see it, not only the schema
    const base = sample(op.body);
    probes.push(withBody('plausible body', base));
    for (const value of WRONG_VALUES) {
      probes.push(withBody(`every field ${JSON.stringify(value)?.slice(0, 20)}`, Object.fromEntries(props.filter((p) => p.path.length === 1).map((p) => [p.path[0], value]))));
    }
    for (const prop of props) {
      for (const value of wrongFor(prop.schema)) probes.push(withBody(`${prop.path.join('.')} = ${JSON.stringify(value).slice(0, 20)}`, setAt(base, prop.path, value)));
      if (prop.path.length === 1) {
        // free-form objects (template_context_variables, extra_metadata, node data) once overflowed the stack
        const marker = '"__deep__"';
        const raw = JSON.stringify(setAt(base, prop.path, '__deep__')).replace(marker, `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`);
        probes.push({ label: `${prop.path[0]} nested 5000 deep`, path, body: raw, contentType: json, auth });
      }
    }
  }
  const queryCases: string[] = [];
  if (queryParams.some((q) => q.name === 'page')) {
    queryCases.push('page=922337203685477580', 'page=1000001', 'page=1e300', 'page=-922337203685477580', 'page=1000000&limit=100', 'limit=99999999999999999999', 'limit=-1');
  }
  for (const q of queryParams) {
    for (const v of ['%7B', 'x'.repeat(5000), '[1,2]', '99999999999999999999', '-1', '']) queryCases.push(`${q.name}=${v}`);
    queryCases.push(`${q.name}=a&${q.name}=b`);
  }
  for (const q of queryCases) probes.push({ label: `query ${q.slice(0, 40)}`, path, query: q, auth });
  return probes;
}

/** Runs `work` over `items` with at most `width` in flight. */
async function pool<T>(items: T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) await work(items[next++]!);
  }));
}

describe('API sweep: no operation answers 5xx to bad input', () => {
  let svc: TestService;
  let auth: Credentials;
  let ops: Operation[];

  beforeAll(async () => {
    svc = await startTestService({ env: { CALLPLANE_DATA_DIR: `/tmp/callplane-sweep-${process.pid}` } });
    auth = { token: (await svc.signup()).token };
    await createWorkflow(svc, auth); // id 1 exists, so plausible ids reach past the lookup
    const doc = await svc.get('/openapi.json');
    expect(doc.status).toBe(200);
    ops = operationsOf(doc.body);
  });
  afterAll(async () => {
    await svc.close();
  });

  const send = async (op: Operation, p: Probe) => {
    // fetch cannot send a GET body; GET operations still get every path and query probe
    if (op.method === 'GET') p = { ...p, body: undefined, contentType: undefined };
    const headers: Record<string, string> = p.contentType ? { 'content-type': p.contentType } : {};
    const url = `${p.path}${p.query ? `?${p.query}` : ''}`;
    return svc.request(op.method, url.startsWith('/api') ? url : `/api/v1${url}`, { rawBody: p.body, headers, auth: p.auth });
  };

  it('covers every operation of the OpenAPI document', () => {
    expect(ops.length).toBeGreaterThan(30);
  });

  it('answers bad input with valid credentials without a 5xx', async () => {
    const failures: string[] = [];
    let sent = 0;
    // logging out ends the sweep's session: those probes go last, one at a time, each with a session of its own
    const endsSession = (op: Operation) => op.method === 'POST' && op.path === '/auth/logout';
    const work = ops.filter((op) => !endsSession(op)).flatMap((op) => probesFor(op, auth).map((probe) => ({ op, probe })));
    const last = ops.filter(endsSession).flatMap((op) => probesFor(op, auth).map((probe) => ({ op, probe })));
    await pool(work, 8, async ({ op, probe }) => {
      const r = await send(op, probe);
      sent++;
      if (r.status >= 500) failures.push(`${op.method} ${op.path} [${probe.label}] → ${r.status} ${r.text.slice(0, 160)}`);
    });
    for (const { op, probe } of last) {
      const own = { token: (await svc.signup()).token };
      const r = await send(op, { ...probe, auth: own });
      sent++;
      if (r.status >= 500) failures.push(`${op.method} ${op.path} [${probe.label}] → ${r.status} ${r.text.slice(0, 160)}`);
    }
    expect(sent).toBe(work.length + last.length);
    expect(failures).toEqual([]);
  }, 120_000);

  it('answers every protected operation without credentials with 401, and none with a 5xx', async () => {
    const failures: string[] = [];
    await pool(ops, 8, async (op) => {
      const path = fill(op.path, (name) => plausible(op.params.find((p) => p.name === name) ?? {}));
      for (const probe of [{ label: 'no credentials', path, body: '{}', contentType: 'application/json' }, { label: 'no credentials, malformed JSON', path, body: '{', contentType: 'application/json' }]) {
        const r = await send(op, probe);
        if (r.status >= 500 || (op.secured && probe.label === 'no credentials' && r.status !== 401)) {
          failures.push(`${op.method} ${op.path} [${probe.label}] → ${r.status} ${r.text.slice(0, 160)}`);
        }
      }
    });
    expect(failures).toEqual([]);
  });
});
