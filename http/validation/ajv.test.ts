import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { nullable, int, obj, str } from '../routing/schema-helpers.js';
import { startTestService, type TestService } from '../../test/support/test-service.js';
import { compileValidator } from './ajv.js';

describe('validation issues (FastAPI shape, API.md section 1)', () => {
  it('reports the expected type of a nullable field, not also "a valid null"', () => {
    const v = compileValidator(obj({ max_concurrency: nullable(int({ minimum: 1, maximum: 100 })) }), 'body');
    expect(v({ max_concurrency: 'lots' })).toEqual([{ loc: ['body', 'max_concurrency'], msg: 'Input should be a valid integer', type: 'int_type' }]);
    expect(v({ max_concurrency: 0 })).toEqual([{ loc: ['body', 'max_concurrency'], msg: 'Input should be greater than or equal to 1', type: 'greater_than_equal' }]);
    expect(v({ max_concurrency: null })).toEqual([]);
  });

  it('reports an either-or of required fields once, by its first name, together with the other missing fields', () => {
    const v = compileValidator(obj({ a: str(), b: str(), b_alias: str() }, ['a'], { anyOf: [{ required: ['b'] }, { required: ['b_alias'] }] }), 'body');
    expect(v({})).toEqual(expect.arrayContaining([
      { loc: ['body', 'a'], msg: 'Field required', type: 'missing' },
      { loc: ['body', 'b'], msg: 'Field required', type: 'missing' },
    ]));
    expect(v({})).toHaveLength(2);
    expect(v({ a: 'x', b_alias: 'y' })).toEqual([]);
  });

  it('keeps the branch of a union that matched furthest', () => {
    const v = compileValidator(obj({ x: { anyOf: [str(), obj({ n: int() }, ['n'])] } }), 'body');
    expect(v({ x: { n: 'no' } })).toEqual([{ loc: ['body', 'x', 'n'], msg: 'Input should be a valid integer', type: 'int_type' }]);
  });
});

describe('every missing field in one response', () => {
  let svc: TestService;
  let token: string;
  beforeAll(async () => {
    svc = await startTestService();
    ({ token } = await svc.signup());
  });
  afterAll(async () => {
    await svc.close();
  });

  it('campaign create names name, workflow_id, source_type and source_id at once', async () => {
    const r = await svc.post('/campaign/create', {}, { token });
    expect(r.status).toBe(422);
    expect(r.body.detail.map((d: { loc: string[] }) => d.loc.join('.')).sort()).toEqual(['body.name', 'body.source_id', 'body.source_type', 'body.workflow_id']);
  });

  it('campaign create with max_concurrency "lots" says an integer was expected, once', async () => {
    const r = await svc.post('/campaign/create', { name: 'x', workflow_id: 1, source_type: 'csv', source_id: 'k', max_concurrency: 'lots' }, { token });
    expect(r.status).toBe(422);
    expect(r.body.detail).toEqual([{ loc: ['body', 'max_concurrency'], msg: 'Input should be a valid integer', type: 'int_type' }]);
  });
});
