import { describe, expect, it } from '@jest/globals';
import { runTelephonyRepositoryContract } from '../../../test/contracts/telephony.repository.contract.js';
import { describeEachMongoTarget } from '../../../test/fakes/mongo/mongo-target.js';
import { createMongoDouble } from '../../../test/fakes/mongo/mongo-double.js';
import { ensureMongoSchema } from './mongo-database.js';
import { contractLabel, insertOrganization, mongoHarness } from './mongo-test-support.js';
import { MongoPhoneNumberRepository, phoneNumberFromDocument, phoneNumberToDocument } from './phone-number.mongo.js';
import {
  MongoTelephonyConfigurationRepository, telephonyConfigurationFromDocument, telephonyConfigurationToDocument,
} from './telephony-configuration.mongo.js';

describeEachMongoTarget('telephony repositories on MongoDB', (target) => {
  runTelephonyRepositoryContract(contractLabel(target), async () => {
    const h = await mongoHarness(target, (db) => new MongoTelephonyConfigurationRepository(db))();
    return {
      configurations: h.repo,
      numbers: new MongoPhoneNumberRepository(h.db),
      organizations: [await insertOrganization(h.db, 'A'), await insertOrganization(h.db, 'B')],
      cleanup: h.cleanup,
    };
  });
});

describe('telephony document mappers', () => {
  const t = new Date('2026-01-01T00:00:00.001Z');
  it('maps a configuration both ways with its lower-cased name key', () => {
    const c = {
      id: 1, organizationId: 2, name: 'Main ÉLAN', provider: 'twilio', isDefaultOutbound: true, accountId: 'AC1', secretsKeyId: 'k',
      settings: { account_sid: 'AC1' }, secrets: { auth_token: 'v1:abc' }, credentialsCheck: null, createdAt: t, updatedAt: t,
    };
    const doc = telephonyConfigurationToDocument(c);
    expect(doc).toMatchObject({ _id: 1, nameKey: 'main élan', isDefaultOutbound: true, settingsJson: '{"account_sid":"AC1"}', secretsJson: '{"auth_token":"v1:abc"}' });
    expect(telephonyConfigurationFromDocument(doc)).toEqual(c);
    const checked = { ...c, credentialsCheck: { ok: true, message: 'Account is active', checkedAt: t } };
    expect(telephonyConfigurationFromDocument(telephonyConfigurationToDocument(checked))).toEqual(checked);
    // documents written before the check existed read as never checked
    const { credentialsCheck: _absent, ...legacy } = doc;
    expect(telephonyConfigurationFromDocument(legacy).credentialsCheck).toBeNull();
  });
  it('maps a phone number both ways', () => {
    const n = {
      id: 5, organizationId: 2, telephonyConfigurationId: 1, provider: 'twilio', accountId: 'AC1', address: '+1 415', addressNormalized: '+1415',
      addressType: 'pstn' as const, extension: '12', countryCode: null, label: 'front', isActive: false, isDefaultCallerId: true, extraMetadata: { '$x.y': 1 },
      inboundWorkflowId: null, createdAt: t, updatedAt: t,
    };
    const doc = phoneNumberToDocument(n);
    expect(doc).toMatchObject({ _id: 5, isActive: false, isDefaultCallerId: true, extraMetadataJson: '{"$x.y":1}' });
    expect(phoneNumberFromDocument(doc)).toEqual(n);
    // documents written before extensions were kept have none
    const { extension: _absent, ...older } = doc;
    expect(phoneNumberFromDocument(older).extension).toBeNull();
  });
});

describe('Mongo telephony specifics [mongo test double (mingo), not a real mongod]', () => {
  const setup = async () => {
    const mongo = createMongoDouble();
    await ensureMongoSchema(mongo.db);
    const org = await insertOrganization(mongo.db, 'A');
    return { mongo, org, configurations: new MongoTelephonyConfigurationRepository(mongo.db), numbers: new MongoPhoneNumberRepository(mongo.db) };
  };
  const cfg = (name: string, now = new Date()) => ({
    name, provider: 'simulator', isDefaultOutbound: true, accountId: 'a', secretsKeyId: 'k', settings: {}, secrets: {}, now,
  });

  it('keeps exactly one default under concurrent switches', async () => {
    const { configurations, org } = await setup();
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await configurations.create(org, { ...cfg(`c${i}`), isDefaultOutbound: false }));
    await Promise.all(made.map((c) => configurations.setDefaultOutbound(org, c.id, new Date())));
    const all = await configurations.list(org);
    expect(all.filter((c) => c.isDefaultOutbound)).toHaveLength(1);
  });

  it('does not keep a number whose configuration is gone', async () => {
    const { numbers, org, mongo } = await setup();
    await expect(numbers.create(org, {
      telephonyConfigurationId: 999, provider: 'simulator', accountId: 'a', address: '1', addressNormalized: '1', addressType: 'sip_extension',
      countryCode: null, label: null, isActive: true, isDefaultCallerId: false, extraMetadata: {}, inboundWorkflowId: null, now: new Date(),
    })).rejects.toThrow(/does not exist/);
    expect(await mongo.fakeDb.collection('phone_numbers').countDocuments()).toBe(0);
  });

  it('moves numbers back when the rename fails after the account moved', async () => {
    const { configurations, numbers, org } = await setup();
    await configurations.create(org, { ...cfg('Taken'), isDefaultOutbound: false });
    const c = await configurations.create(org, { ...cfg('Mine'), isDefaultOutbound: false });
    await numbers.create(org, {
      telephonyConfigurationId: c.id, provider: 'simulator', accountId: 'a', address: '1', addressNormalized: '1', addressType: 'sip_extension',
      countryCode: null, label: null, isActive: true, isDefaultCallerId: false, extraMetadata: {}, inboundWorkflowId: null, now: new Date(),
    });
    await expect(configurations.update(org, c.id, { name: 'taken', accountId: 'b', now: new Date() })).rejects.toMatchObject({ code: 'telephony_configuration_name_taken' });
    expect((await numbers.list(org, c.id)).map((n) => n.accountId)).toEqual(['a']);
    expect((await configurations.get(org, c.id))!.accountId).toBe('a');
  });
});
