import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { exampleWorkflowDefinition } from '../../core/workflows/example-definition.js';
import { startTestService, type TestService } from '../../test/support/test-service.js';
import { jsonDepth, MAX_JSON_DEPTH } from './json-depth.js';

const nested = (levels: number, leaf = '1') => '{"a":'.repeat(levels) + leaf + '}'.repeat(levels);
const bytes = (s: string) => Buffer.from(s);

describe('jsonDepth', () => {
  it('counts objects and arrays, not brackets inside strings or escaped quotes', () => {
    expect(jsonDepth(bytes('1'))).toBe(0);
    expect(jsonDepth(bytes('{"a":[1,{"b":[]}]}'))).toBe(4);
    expect(jsonDepth(bytes('{"a":"[[[{{{\\"[[[","b":{}}'))).toBe(2);
    expect(jsonDepth(bytes('[[],[],[[]]]'))).toBe(3);
    expect(jsonDepth(bytes(nested(4500)))).toBe(4500);
  });

  it('stops once the limit is passed', () => {
    expect(jsonDepth(bytes(nested(4500)), 32)).toBe(33);
  });
});

describe('JSON nesting limit at the edge', () => {
  let svc: TestService;
  let token: string;
  beforeAll(async () => {
    svc = await startTestService();
    ({ token } = await svc.signup());
  });
  afterAll(async () => {
    await svc.close();
  });

  const createWorkflow = (extra: string) =>
    svc.request('POST', '/workflow/create/definition', {
      rawBody: `{"name":"Deep","workflow_definition":${JSON.stringify(exampleWorkflowDefinition)},${extra}}`,
      headers: { 'content-type': 'application/json' },
      auth: { token },
    });

  it.each(['template_context_variables', 'workflow_configurations'])('refuses %s nested 4,500 levels with a 422 json_too_deep', async (field) => {
    const r = await createWorkflow(`"${field}":${nested(4500)}`);
    expect(r.status).toBe(422);
    expect(r.body).toEqual({ detail: [{ loc: ['body'], msg: expect.any(String), type: 'json_too_deep' }] });
  });

  it('accepts free-form objects nested up to the limit', async () => {
    // the body itself is level 1, the field's object level 2
    const r = await createWorkflow(`"template_context_variables":${nested(MAX_JSON_DEPTH - 1, '"x"')}`);
    expect(r.status).toBe(200);
  });

  it('refuses deep nesting on every JSON route, before authentication is even looked at', async () => {
    const r = await svc.request('POST', '/auth/login', { rawBody: nested(4500), headers: { 'content-type': 'application/json' } });
    expect(r.status).toBe(422);
    expect(r.body.detail[0].type).toBe('json_too_deep');
  });
});
