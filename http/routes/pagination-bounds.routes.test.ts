import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestService, type Credentials, type TestService } from '../../test/support/test-service.js';
import { createWorkflow } from '../../test/e2e/campaign-support.js';

/** API.md section 1: `page` ≥ 1 (at most 1,000,000), `limit` 1..100, identifiers positive integers. */
describe('pagination and id bounds', () => {
  let svc: TestService;
  let auth: Credentials;
  let workflowId: number;
  const campaignId = 1; // validation answers before the campaign is looked up

  beforeAll(async () => {
    svc = await startTestService({ env: { CALLPLANE_DATA_DIR: `/tmp/callplane-pagination-${process.pid}` } });
    auth = { token: (await svc.signup()).token };
    workflowId = await createWorkflow(svc, auth);
  });
  afterAll(async () => {
    await svc.close();
  });

  const lists = () => [`/workflow/${workflowId}/runs`, `/campaign/${campaignId}/runs`, '/organizations/usage/runs'];

  it('answers a page far beyond any offset with 422 on ["query","page"], never 500', async () => {
    for (const path of lists()) {
      for (const page of ['922337203685477580', '99999999999999999999', '1000001', '1e300']) {
        const r = await svc.get(`${path}?page=${page}`, auth);
        expect([path, page, r.status]).toEqual([path, page, 422]);
        expect(r.body.detail[0].loc).toEqual(['query', 'page']);
      }
      for (const page of ['0', '-1', '-922337203685477580']) expect((await svc.get(`${path}?page=${page}`, auth)).status).toBe(422);
      const last = await svc.get(`${path}?page=1000000&limit=100`, auth);
      if (path.startsWith('/campaign/')) expect(last.status).toBe(404);
      else {
        expect([path, last.status]).toEqual([path, 200]);
        expect(last.body).toMatchObject({ runs: [], page: 1000000, limit: 100 });
      }
      expect((await svc.get(`${path}?limit=101`, auth)).status).toBe(422);
      expect((await svc.get(`${path}?limit=99999999999999999999`, auth)).status).toBe(422);
    }
  });

  it('answers huge, negative and non-numeric path ids with 404 or 422, never 500', async () => {
    const paths = (id: string) => [`/workflow/${id}`, `/workflow/${id}/runs`, `/workflow/${workflowId}/runs/${id}`, `/campaign/${id}`, `/campaign/${id}/runs`];
    for (const id of ['99999999999999999999', '9223372036854775808', '9007199254740993', '-1', '-99999999999999999999', '0', '1e300', 'abc']) {
      for (const path of paths(id)) {
        const r = await svc.get(path, auth);
        expect([path, [404, 422].includes(r.status)]).toEqual([path, true]);
      }
    }
  });
});
