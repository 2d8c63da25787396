import { describe, expect, it } from '@jest/globals';
import { DEFAULT_CIRCUIT_BREAKER, DEFAULT_RETRY_CONFIG, type Campaign } from '../../../core/campaigns/campaign.js';
import { runCampaignRepositoryContract } from '../../../test/contracts/campaign.repository.contract.js';
import { describeEachMongoTarget } from '../../../test/fakes/mongo/mongo-target.js';
import { createMongoDouble } from '../../../test/fakes/mongo/mongo-double.js';
import {
  MongoCampaignRepository, campaignFromDocument, campaignLogFromDocument, campaignLogToDocument, campaignToDocument, contactFromDocument,
  contactToDocument,
} from './campaign.mongo.js';
import { ensureMongoSchema } from './mongo-database.js';
import { contractLabel, insertOrganization, mongoHarness } from './mongo-test-support.js';
import { MongoUploadRepository, uploadFromDocument, uploadToDocument } from './upload.mongo.js';

describeEachMongoTarget('campaign repository on MongoDB', (target) => {
  runCampaignRepositoryContract(contractLabel(target), async () => {
    const h = await mongoHarness(target, (db) => new MongoCampaignRepository(db))();
    return { repo: h.repo, organizations: [await insertOrganization(h.db, 'A'), await insertOrganization(h.db, 'B')], cleanup: h.cleanup };
  });
});

const t = new Date('2026-02-03T04:05:06.007Z');
const campaign: Campaign = {
  id: 3, organizationId: 1, name: 'c', workflowId: 7, telephonyConfigurationId: null, state: 'running', sourceType: 'csv', sourceId: 'k',
  totalRows: 5, processedRows: 1, failedRows: 1, executedCount: 2, totalQueuedCount: 6, inFlight: 2, retryConfig: { ...DEFAULT_RETRY_CONFIG },
  maxConcurrency: 3, scheduleConfig: { enabled: true, timezone: 'UTC', slots: [{ day_of_week: 1, start_time: '09:00', end_time: '17:00' }] } as never,
  circuitBreaker: { ...DEFAULT_CIRCUIT_BREAKER }, parentCampaignId: null, redialedCampaignId: null, breakerResetAt: t, createdAt: t, startedAt: t,
  completedAt: null, updatedAt: t,
};

describe('campaign document mappers', () => {
  it('maps a campaign both ways, inFlight being the number of slots', () => {
    const slots = [{ token: 10, until: t }, { token: 11, until: t }];
    const doc = campaignToDocument(campaign, slots);
    expect(doc).toMatchObject({ _id: 3, inFlightSlots: slots, state: 'running', retryConfig: DEFAULT_RETRY_CONFIG });
    expect(doc).not.toHaveProperty('inFlight');
    expect(campaignFromDocument(doc)).toEqual(campaign);
    expect(campaignFromDocument(campaignToDocument(campaign)).inFlight).toBe(0);
  });

  it('maps contacts (context as text) and log entries both ways', () => {
    const contact = {
      id: 4, organizationId: 1, campaignId: 3, row: 2, phoneNumber: '+15550001000', context: { '$weird.col': 'v' }, status: 'pending' as const,
      attemptsMade: 0, nextAttemptAt: t, currentAttemptId: null, lastOutcome: null, finalOutcome: null, updatedAt: t,
    };
    const doc = contactToDocument(contact, { slotToken: 9, leaseUntil: t });
    expect(doc).toMatchObject({ contextJson: '{"$weird.col":"v"}', slotToken: 9, leaseUntil: t });
    expect(contactFromDocument(doc)).toEqual(contact);
    const entry = { ts: t, level: 'warning' as const, event: 'e', message: 'm', details: { a: [1] } };
    expect(campaignLogFromDocument(campaignLogToDocument(8, 1, 3, entry))).toEqual(entry);
  });

  it('maps uploads both ways', () => {
    const u = { id: 1, organizationId: 2, fileKey: 'uploads/2/u/a.csv', fileName: 'a.csv', declaredSize: 10, contentType: 'text/csv', createdAt: t, expiresAt: t, uploadedAt: null, size: null };
    expect(uploadFromDocument(uploadToDocument(u))).toEqual(u);
  });
});

describe('Mongo campaign specifics [mongo test double (mingo), not a real mongod]', () => {
  const setup = async (contacts = 3, maxConcurrency = 2) => {
    const mongo = createMongoDouble();
    await ensureMongoSchema(mongo.db);
    const org = await insertOrganization(mongo.db, 'A');
    const repo = new MongoCampaignRepository(mongo.db);
    const c = await repo.create(org, {
      name: 'x', workflowId: 1, telephonyConfigurationId: null, sourceType: 'csv', sourceId: 's', retryConfig: { ...DEFAULT_RETRY_CONFIG },
      maxConcurrency, scheduleConfig: null, circuitBreaker: { ...DEFAULT_CIRCUIT_BREAKER },
      contacts: Array.from({ length: contacts }, (_, i) => ({ row: i + 2, phoneNumber: `+1555${i}`, context: {} })), logs: [], now: t,
    });
    await repo.transition(org, c.id, { from: ['draft'], to: 'running', now: t });
    return { mongo, org, repo, c };
  };
  const later = (ms: number) => new Date(t.getTime() + ms);

  it('frees a slot whose claim died before taking a contact, once its lease passed', async () => {
    const { mongo, org, repo, c } = await setup();
    // what a process leaves when it dies right after step (1) of a claim
    await mongo.fakeDb.collection('campaigns').updateOne({ _id: c.id }, { $push: { inFlightSlots: { token: 999, until: later(1000) } } });
    expect((await repo.get(org, c.id))!.inFlight).toBe(1);
    expect(await repo.repair(later(999))).toEqual({ slotsFreed: 0, attemptsWritten: 0 });
    const live = await repo.claimNextContact(org, c.id, { now: t, leaseMs: 500 });
    expect(live.kind).toBe('claimed');
    expect(await repo.repair(later(1000))).toEqual({ slotsFreed: 1, attemptsWritten: 0 }); // the live claim's expired slot is kept
    expect((await repo.get(org, c.id))!.inFlight).toBe(1);
  });

  it('writes the attempt of a contact whose claim died before step (3), so the sweep can release it', async () => {
    const { mongo, org, repo, c } = await setup();
    const r = await repo.claimNextContact(org, c.id, { now: t, leaseMs: 1000 });
    if (r.kind !== 'claimed') throw new Error('claim');
    await mongo.fakeDb.collection('campaign_attempts').deleteOne({ _id: r.attempt.id }); // as if step (3) never ran
    expect(await repo.attemptsDueForCheck(later(999), 10)).toEqual([]);
    const due = await repo.attemptsDueForCheck(later(1000), 10);
    expect(due.map((d) => [d.attempt.id, d.attempt.status, d.contact.id])).toEqual([[r.attempt.id, 'claimed', r.contact.id]]);
    expect(await repo.releaseAttempt(org, r.attempt.id, later(1001))).toBe(true);
    expect((await repo.get(org, c.id))!.inFlight).toBe(0);
    expect((await repo.listContacts(org, c.id, { status: 'pending' })).length).toBe(3);
  });

  it('finishes an interrupted release on the next call', async () => {
    const { mongo, org, repo, c } = await setup();
    const r = await repo.claimNextContact(org, c.id, { now: t, leaseMs: 1000 });
    if (r.kind !== 'claimed') throw new Error('claim');
    const a = (await mongo.fakeDb.collection('campaign_attempts').findOne({ _id: r.attempt.id }))!;
    // only the decisive first step of a release happened
    await mongo.fakeDb.collection('campaign_attempts').updateOne({ _id: a._id }, { $set: { slotToken: null, releasedToken: a.slotToken } });
    expect(await repo.markDialing(org, r.attempt.id, { now: t, checkAt: later(5) })).toBeNull();
    expect(await repo.releaseAttempt(org, r.attempt.id, later(1))).toBe(true);
    expect(await repo.releaseAttempt(org, r.attempt.id, later(2))).toBe(false);
    expect((await repo.get(org, c.id))!.inFlight).toBe(0);
  });

  it('counts an outcome exactly once under concurrent replays', async () => {
    const { org, repo, c } = await setup();
    const r = await repo.claimNextContact(org, c.id, { now: t, leaseMs: 1000 });
    if (r.kind !== 'claimed') throw new Error('claim');
    await repo.markDialing(org, r.attempt.id, { now: t, checkAt: later(5) });
    await repo.attachRun(org, r.attempt.id, { runId: 1, now: t });
    const results = await Promise.all(Array.from({ length: 5 }, () => repo.recordOutcome(org, r.attempt.id, { outcome: 'failed', now: later(1), retryAt: null })));
    expect(results.filter((x) => x!.recorded)).toHaveLength(1);
    expect(await repo.get(org, c.id)).toMatchObject({ processedRows: 1, failedRows: 1, inFlight: 0 });
  });

  it('stores uploads with a unique key, scoped by organization', async () => {
    const { mongo, org } = await setup(0);
    const uploads = new MongoUploadRepository(mongo.db);
    const input = { fileKey: 'uploads/1/u/a.csv', fileName: 'a.csv', declaredSize: 3, contentType: 'text/csv', expiresAt: later(60_000), now: t };
    const u = await uploads.create(org, input);
    await expect(uploads.create(org, input)).rejects.toMatchObject({ code: 'upload_exists' });
    expect(await uploads.getByKey(org, input.fileKey)).toEqual(u);
    expect(await uploads.getByKey(org + 1, input.fileKey)).toBeNull();
    expect(await uploads.markUploaded(org + 1, input.fileKey, { size: 3, now: later(1) })).toBeNull();
    expect(await uploads.markUploaded(org, input.fileKey, { size: 3, now: later(1) })).toMatchObject({ size: 3, uploadedAt: later(1) });
  });
});
