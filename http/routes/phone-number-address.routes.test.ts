/**
 * Phone number addresses through the API (API.md section 5, issue 10): what starts like a phone number is parsed
 * as one, keeps its extension apart, or is refused with a 422 on body.address; PBX extensions stay extensions.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestService, type Credentials, type TestService } from '../../test/support/test-service.js';
import { createSimulatorConfig } from '../../test/e2e/campaign-support.js';

describe('phone number addresses', () => {
  let svc: TestService;
  let auth: Credentials;
  let numbers: string;

  beforeAll(async () => {
    svc = await startTestService();
    auth = { token: (await svc.signup()).token };
    numbers = `/organizations/telephony-configs/${await createSimulatorConfig(svc, auth)}/phone-numbers`;
  });
  afterAll(() => svc.close());

  const create = (body: Record<string, unknown>) => svc.post(numbers, body, auth);

  it('keeps the extension of "+1 650 253 0000 ext. 1234" apart from its E.164 number, and persists it', async () => {
    const r = await create({ address: '+1 650 253 0000 ext. 1234' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ address: '+1 650 253 0000 ext. 1234', address_type: 'pstn', address_normalized: '+16502530000', extension: '1234' });
    const again = await svc.get(`${numbers}/${r.body.id}`, auth);
    expect(again.body.extension).toBe('1234');
  });

  it('keeps the ;ext= of a tel: URI and converts vanity letters and Arabic-Indic digits', async () => {
    const tel = await create({ address: 'tel:+1-650-253-0001;ext=456' });
    expect(tel.body).toMatchObject({ address_type: 'pstn', address_normalized: '+16502530001', extension: '456' });
    const vanity = await create({ address: '+1 800 FLOWERS' });
    expect(vanity.body).toMatchObject({ address_type: 'pstn', address_normalized: '+18003569377', extension: null });
    const arabic = await create({ address: '+٤٤ ٢٠ ٧٩٤٦ ٠٠١٨' });
    expect(arabic.body).toMatchObject({ address_type: 'pstn', address_normalized: '+442079460018', extension: null });
  });

  it('refuses with 422 on body.address what starts like a phone number but does not parse', async () => {
    for (const address of ['+1abc', '+1 800 FL', 'tel:+1-650;ext=9']) {
      const r = await create({ address });
      expect([address, r.status]).toEqual([address, 422]);
      expect(r.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'address'], type: 'value_error' })]);
    }
  });

  it('keeps PBX extensions as sip_extension with no extension field value', async () => {
    for (const address of ['1001', 'desk-abc']) {
      const r = await create({ address });
      expect(r.body).toMatchObject({ address_type: 'sip_extension', address_normalized: address, extension: null });
    }
  });

  it('recomputes the extension with the address when country_code changes', async () => {
    const r = await create({ address: '(650) 253-0002 x9', country_code: 'US' });
    expect(r.body).toMatchObject({ address_normalized: '+16502530002', extension: '9' });
    const u = await svc.request('PUT', `${numbers}/${r.body.id}`, { body: { country_code: 'CA' }, auth });
    expect(u.status).toBe(200);
    expect(u.body).toMatchObject({ country_code: 'CA', address_normalized: '+16502530002', extension: '9' });
  });
});
