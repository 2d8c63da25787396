import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { NewPhoneNumber, PhoneNumberRepository } from '../../core/ports/phone-number.repository.port.js';
import type { NewTelephonyConfiguration, TelephonyConfigurationRepository } from '../../core/ports/telephony-configuration.repository.port.js';
import { conflictCode } from './conflict-code.js';

export interface TelephonyRepositoryHarness {
  configurations: TelephonyConfigurationRepository;
  numbers: PhoneNumberRepository;
  /** Two existing, distinct organizations. */
  organizations: [number, number];
  cleanup(): Promise<void>;
}

const t0 = new Date('2026-03-01T10:00:00.000Z');
const later = (ms: number) => new Date(t0.getTime() + ms);

/**
 * The TelephonyConfigurationRepository + PhoneNumberRepository contract every storage adapter runs.
 * `make` returns a fresh, empty store with two organizations for each test.
 */
export function runTelephonyRepositoryContract(label: string, make: () => Promise<TelephonyRepositoryHarness>): void {
  describe(`telephony repositories contract: ${label}`, () => {
    let h: TelephonyRepositoryHarness;
    let orgA: number;
    let orgB: number;
    beforeEach(async () => {
      h = await make();
      [orgA, orgB] = h.organizations;
    });
    afterEach(async () => {
      await h.cleanup();
    });

    const config = (over: Partial<NewTelephonyConfiguration> = {}): NewTelephonyConfiguration => ({
      name: 'Main', provider: 'simulator', isDefaultOutbound: false, accountId: 'acct-1', secretsKeyId: 'k-1',
      settings: { ring_ms: 300 }, secrets: { api_key: 'v1:cipher' }, now: t0, ...over,
    });
    const number = (configurationId: number, over: Partial<NewPhoneNumber> = {}): NewPhoneNumber => ({
      telephonyConfigurationId: configurationId, provider: 'simulator', accountId: 'acct-1', address: '+1 415 555 0142',
      addressNormalized: '+14155550142', addressType: 'pstn', countryCode: null, label: null, isActive: true, isDefaultCallerId: false,
      extraMetadata: {}, inboundWorkflowId: null, now: t0, ...over,
    });

    describe('configurations', () => {
      it('creates, reads, lists oldest first, and scopes by organization', async () => {
        const a = await h.configurations.create(orgA, config());
        expect(a).toEqual({
          id: expect.any(Number), organizationId: orgA, name: 'Main', provider: 'simulator', isDefaultOutbound: false, accountId: 'acct-1',
          secretsKeyId: 'k-1', settings: { ring_ms: 300 }, secrets: { api_key: 'v1:cipher' }, credentialsCheck: null, createdAt: t0, updatedAt: t0,
        });
        const b = await h.configurations.create(orgA, config({ name: 'Second', now: later(1) }));
        expect((await h.configurations.list(orgA)).map((c) => c.id)).toEqual([a.id, b.id]);
        expect(await h.configurations.get(orgA, a.id)).toEqual(a);
        expect(await h.configurations.get(orgB, a.id)).toBeNull();
        expect(await h.configurations.list(orgB)).toEqual([]);
        expect(await h.configurations.findForProviderEvent(a.id)).toEqual(a);
        expect(await h.configurations.findForProviderEvent(999_999)).toBeNull();
        expect((await h.configurations.listByProvider('simulator')).map((c) => c.id)).toEqual([a.id, b.id]);
        expect(await h.configurations.listByProvider('twilio')).toEqual([]);
      });

      it('keeps names unique per organization, case-insensitively, on create and rename', async () => {
        const a = await h.configurations.create(orgA, config({ name: 'Main Line' }));
        expect(await conflictCode(h.configurations.create(orgA, config({ name: 'MAIN line' })))).toBe('telephony_configuration_name_taken');
        await expect(h.configurations.create(orgB, config({ name: 'main line' }))).resolves.toMatchObject({ organizationId: orgB });
        const b = await h.configurations.create(orgA, config({ name: 'Other' }));
        expect(await conflictCode(h.configurations.update(orgA, b.id, { name: 'main LINE', now: later(5) }))).toBe('telephony_configuration_name_taken');
        // renaming to itself in another case is fine
        await expect(h.configurations.update(orgA, a.id, { name: 'MAIN LINE', now: later(5) })).resolves.toMatchObject({ name: 'MAIN LINE', updatedAt: later(5) });
      });

      it('has at most one default outbound per organization, switched atomically', async () => {
        const a = await h.configurations.create(orgA, config({ name: 'A', isDefaultOutbound: true }));
        const other = await h.configurations.create(orgB, config({ name: 'B0', isDefaultOutbound: true }));
        expect(a.isDefaultOutbound).toBe(true);
        const b = await h.configurations.create(orgA, config({ name: 'B', isDefaultOutbound: true, now: later(1) }));
        expect(b.isDefaultOutbound).toBe(true);
        expect((await h.configurations.get(orgA, a.id))!.isDefaultOutbound).toBe(false);
        expect((await h.configurations.getDefaultOutbound(orgA))!.id).toBe(b.id);
        expect((await h.configurations.setDefaultOutbound(orgA, a.id, later(2)))!.isDefaultOutbound).toBe(true);
        expect((await h.configurations.get(orgA, b.id))!.isDefaultOutbound).toBe(false);
        expect(await h.configurations.setDefaultOutbound(orgA, a.id, later(3))).toMatchObject({ isDefaultOutbound: true });
        expect(await h.configurations.setDefaultOutbound(orgB, a.id, later(3))).toBeNull();
        expect((await h.configurations.getDefaultOutbound(orgB))!.id).toBe(other.id);
      });

      it('records the credentials check (replacing the last one, updatedAt untouched); null for absent or foreign', async () => {
        const a = await h.configurations.create(orgA, config());
        expect(a.credentialsCheck).toBeNull();
        const refused = { ok: false, message: 'Twilio refused the credentials (HTTP 401)', checkedAt: later(1) };
        expect(await h.configurations.recordCredentialsCheck(orgA, a.id, refused)).toMatchObject({ id: a.id, credentialsCheck: refused, updatedAt: t0 });
        const accepted = { ok: true, message: 'Account "Main" is active', checkedAt: later(2) };
        await h.configurations.recordCredentialsCheck(orgA, a.id, accepted);
        expect((await h.configurations.get(orgA, a.id))!.credentialsCheck).toEqual(accepted);
        expect((await h.configurations.findForProviderEvent(a.id))!.credentialsCheck).toEqual(accepted);
        // a later update of the credentials keeps the stored check until the caller records a new one
        expect((await h.configurations.update(orgA, a.id, { name: 'Renamed', now: later(3) }))!.credentialsCheck).toEqual(accepted);
        expect(await h.configurations.recordCredentialsCheck(orgB, a.id, refused)).toBeNull();
        expect(await h.configurations.recordCredentialsCheck(orgA, 999_999, refused)).toBeNull();
        expect((await h.configurations.get(orgA, a.id))!.credentialsCheck).toEqual(accepted);
      });

      it('updates credentials and name partially; null for absent or foreign', async () => {
        const a = await h.configurations.create(orgA, config());
        const u = await h.configurations.update(orgA, a.id, { settings: { ring_ms: 5 }, secrets: { api_key: 'v1:other' }, now: later(9) });
        expect(u).toMatchObject({ name: 'Main', settings: { ring_ms: 5 }, secrets: { api_key: 'v1:other' }, updatedAt: later(9), createdAt: t0 });
        expect(await h.configurations.update(orgB, a.id, { name: 'x', now: later(9) })).toBeNull();
        expect(await h.configurations.update(orgA, 999_999, { name: 'x', now: later(9) })).toBeNull();
      });

      it('moves its numbers with a new account id, refusing a collision with another organization', async () => {
        const a = await h.configurations.create(orgA, config());
        const n = await h.numbers.create(orgA, number(a.id));
        await h.configurations.update(orgA, a.id, { accountId: 'acct-2', now: later(1) });
        expect((await h.numbers.get(orgA, a.id, n.id))!.accountId).toBe('acct-2');
        expect((await h.numbers.findForInbound('simulator', 'acct-2', '+14155550142'))!.id).toBe(n.id);
        expect(await h.numbers.findForInbound('simulator', 'acct-1', '+14155550142')).toBeNull();
        const b = await h.configurations.create(orgB, config({ accountId: 'acct-3' }));
        await h.numbers.create(orgB, number(b.id, { accountId: 'acct-3' }));
        expect(await conflictCode(h.configurations.update(orgA, a.id, { accountId: 'acct-3', name: 'Renamed', now: later(2) }))).toBe('phone_number_conflict');
        // nothing of the refused update stuck
        expect(await h.configurations.get(orgA, a.id)).toMatchObject({ accountId: 'acct-2', name: 'Main' });
      });

      it('deletes with its numbers, scoped by organization', async () => {
        const a = await h.configurations.create(orgA, config());
        await h.numbers.create(orgA, number(a.id));
        expect(await h.configurations.delete(orgB, a.id)).toBe(false);
        expect(await h.configurations.delete(orgA, a.id)).toBe(true);
        expect(await h.configurations.delete(orgA, a.id)).toBe(false);
        expect(await h.configurations.get(orgA, a.id)).toBeNull();
        expect(await h.numbers.findForInbound('simulator', 'acct-1', '+14155550142')).toBeNull();
        // the address is free again
        const again = await h.configurations.create(orgA, config());
        await expect(h.numbers.create(orgA, number(again.id))).resolves.toMatchObject({ addressNormalized: '+14155550142' });
      });
    });

    describe('phone numbers', () => {
      it('creates, reads, lists, counts, scopes by organization and configuration', async () => {
        const a = await h.configurations.create(orgA, config());
        const a2 = await h.configurations.create(orgA, config({ name: 'A2' }));
        const n1 = await h.numbers.create(orgA, number(a.id, { label: 'front', countryCode: 'US', extraMetadata: { k: [1] }, inboundWorkflowId: 7 }));
        expect(n1).toEqual({
          id: expect.any(Number), organizationId: orgA, telephonyConfigurationId: a.id, provider: 'simulator', accountId: 'acct-1',
          address: '+1 415 555 0142', addressNormalized: '+14155550142', addressType: 'pstn', extension: null, countryCode: 'US', label: 'front', isActive: true,
          isDefaultCallerId: false, extraMetadata: { k: [1] }, inboundWorkflowId: 7, createdAt: t0, updatedAt: t0,
        });
        const n2 = await h.numbers.create(orgA, number(a.id, { address: '1001', addressNormalized: '1001', addressType: 'sip_extension', now: later(1) }));
        expect((await h.numbers.list(orgA, a.id)).map((n) => n.id)).toEqual([n1.id, n2.id]);
        expect(await h.numbers.list(orgA, a2.id)).toEqual([]);
        expect(await h.numbers.get(orgA, a2.id, n1.id)).toBeNull();
        expect(await h.numbers.get(orgB, a.id, n1.id)).toBeNull();
        expect(await h.numbers.list(orgB, a.id)).toEqual([]);
        expect(await h.numbers.countByConfiguration(orgA)).toEqual(new Map([[a.id, 2]]));
        expect(await h.numbers.countByConfiguration(orgB)).toEqual(new Map());
        expect(await h.numbers.findForInbound('simulator', 'acct-1', '1001')).toEqual(n2);
      });

      it('keeps the extension of a pstn number, changes it with the address, and clears it with null', async () => {
        const a = await h.configurations.create(orgA, config());
        const n = await h.numbers.create(orgA, number(a.id, { address: '+1 650 253 0000 ext. 1234', addressNormalized: '+16502530000', extension: '1234' }));
        expect(n).toMatchObject({ address: '+1 650 253 0000 ext. 1234', addressNormalized: '+16502530000', extension: '1234' });
        expect(await h.numbers.get(orgA, a.id, n.id)).toMatchObject({ extension: '1234' });
        expect(await h.numbers.findForInbound('simulator', 'acct-1', '+16502530000')).toMatchObject({ id: n.id, extension: '1234' });
        // a patch without extension keeps it; a new one replaces it; null clears it
        expect(await h.numbers.update(orgA, a.id, n.id, { label: 'desk', now: later(1) })).toMatchObject({ extension: '1234' });
        expect(await h.numbers.update(orgA, a.id, n.id, { extension: '0077', now: later(2) })).toMatchObject({ extension: '0077' });
        expect(await h.numbers.update(orgA, a.id, n.id, { extension: null, now: later(3) })).toMatchObject({ extension: null });
        expect((await h.numbers.list(orgA, a.id))[0].extension).toBeNull();
      });

      it('refuses the same address twice in an organization (exists) and across organizations on one account (conflict)', async () => {
        const a = await h.configurations.create(orgA, config());
        const a2 = await h.configurations.create(orgA, config({ name: 'A2', accountId: 'acct-9' }));
        const b = await h.configurations.create(orgB, config());
        const b2 = await h.configurations.create(orgB, config({ name: 'B2', accountId: 'acct-other' }));
        await h.numbers.create(orgA, number(a.id));
        expect(await conflictCode(h.numbers.create(orgA, number(a.id)))).toBe('phone_number_exists');
        expect(await conflictCode(h.numbers.create(orgA, number(a2.id, { accountId: 'acct-9' })))).toBe('phone_number_exists');
        expect(await conflictCode(h.numbers.create(orgB, number(b.id)))).toBe('phone_number_conflict');
        // another account of the same provider may hold the same address
        await expect(h.numbers.create(orgB, number(b2.id, { accountId: 'acct-other' }))).resolves.toMatchObject({ organizationId: orgB });
      });

      it('updates partially, re-checks uniqueness when the address moves', async () => {
        const a = await h.configurations.create(orgA, config());
        const n1 = await h.numbers.create(orgA, number(a.id, { address: '4155550142', addressNormalized: '+14155550142', label: 'x', inboundWorkflowId: 3 }));
        const n2 = await h.numbers.create(orgA, number(a.id, { address: '4155550143', addressNormalized: '+14155550143' }));
        const u = await h.numbers.update(orgA, a.id, n1.id, { label: null, isActive: false, extraMetadata: { a: 1 }, now: later(3) });
        expect(u).toMatchObject({ label: null, isActive: false, extraMetadata: { a: 1 }, inboundWorkflowId: 3, updatedAt: later(3) });
        expect(await h.numbers.update(orgA, a.id, n1.id, { inboundWorkflowId: null, countryCode: 'GB', now: later(4) })).toMatchObject({ inboundWorkflowId: null, countryCode: 'GB', label: null });
        expect(await conflictCode(h.numbers.update(orgA, a.id, n2.id, { addressNormalized: '+14155550142', now: later(5) }))).toBe('phone_number_exists');
        expect(await h.numbers.update(orgA, a.id, n2.id, { addressNormalized: '+442071838750', countryCode: 'GB', now: later(6) })).toMatchObject({ addressNormalized: '+442071838750' });
        expect(await h.numbers.update(orgB, a.id, n1.id, { label: 'no', now: later(7) })).toBeNull();
      });

      it('has at most one default caller id per configuration', async () => {
        const a = await h.configurations.create(orgA, config());
        const a2 = await h.configurations.create(orgA, config({ name: 'A2' }));
        const n1 = await h.numbers.create(orgA, number(a.id, { isDefaultCallerId: true }));
        const other = await h.numbers.create(orgA, number(a2.id, { address: '2', addressNormalized: '2', addressType: 'sip_extension', isDefaultCallerId: true }));
        const n2 = await h.numbers.create(orgA, number(a.id, { address: '1', addressNormalized: '1', addressType: 'sip_extension', isDefaultCallerId: true }));
        expect((await h.numbers.get(orgA, a.id, n1.id))!.isDefaultCallerId).toBe(false);
        expect((await h.numbers.getDefaultCaller(orgA, a.id))!.id).toBe(n2.id);
        expect((await h.numbers.setDefaultCaller(orgA, a.id, n1.id, later(1)))!.isDefaultCallerId).toBe(true);
        expect((await h.numbers.get(orgA, a.id, n2.id))!.isDefaultCallerId).toBe(false);
        expect((await h.numbers.getDefaultCaller(orgA, a2.id))!.id).toBe(other.id);
        expect(await h.numbers.setDefaultCaller(orgB, a.id, n1.id, later(1))).toBeNull();
        expect(await h.numbers.setDefaultCaller(orgA, a2.id, n1.id, later(1))).toBeNull();
      });

      it('deletes idempotently and scoped', async () => {
        const a = await h.configurations.create(orgA, config());
        const n = await h.numbers.create(orgA, number(a.id));
        expect(await h.numbers.delete(orgB, a.id, n.id)).toBe(false);
        expect(await h.numbers.delete(orgA, a.id, n.id)).toBe(true);
        expect(await h.numbers.delete(orgA, a.id, n.id)).toBe(false);
        expect(await h.numbers.findForInbound('simulator', 'acct-1', '+14155550142')).toBeNull();
      });
    });
  });
}
