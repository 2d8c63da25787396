import { describe, expect, it } from '@jest/globals';
import { runOrganizationSettingsRepositoryContract, runUsageRepositoryContract } from '../../../test/contracts/usage.repository.contract.js';
import { describeEachMongoTarget } from '../../../test/fakes/mongo/mongo-target.js';
import { RUN_STATUS_RANK } from '../../../core/runs/run.js';
import { matchesUsageFilter, type UsageFilter } from '../../../core/usage/usage.js';
import { Query } from 'mingo';
import { contractLabel, insertOrganization, mongoHarness } from './mongo-test-support.js';
import { MongoOrganizationSettingsRepository, organizationSettingsFromDocument, organizationSettingsToDocument } from './organization-settings.mongo.js';
import { MongoRunRepository, runToDocument } from './run.mongo.js';
import { MongoUsageRepository, usageQuery, type MongoUsageOptions } from './usage.mongo.js';
import { MongoWorkflowRepository } from './workflow.mongo.js';
import type { Run } from '../../../core/runs/run.js';

const usageOn = (options?: MongoUsageOptions) => (target: Parameters<Parameters<typeof describeEachMongoTarget>[1]>[0]) => async () => {
  const { db, cleanup } = await mongoHarness(target, () => null)();
  return {
    usage: new MongoUsageRepository(db, options),
    runs: new MongoRunRepository(db),
    workflows: new MongoWorkflowRepository(db),
    newOrganization: (name: string) => insertOrganization(db, name),
    cleanup,
  };
};

describeEachMongoTarget('usage on MongoDB', (target) => {
  // the double scans every document per query: fewer runs there (a real server runs the suite's full size)
  runUsageRepositoryContract(contractLabel(target), usageOn()(target), { bigRuns: target.isDouble ? 300 : undefined });
  // tiny slices and threshold: every deep page goes through the slice search, several levels deep
  runUsageRepositoryContract(`${contractLabel(target)}, boundary search forced (3 slices, threshold 5)`, usageOn({ slices: 3, offsetThreshold: 5 })(target), { bigRuns: target.isDouble ? 120 : undefined });
  runOrganizationSettingsRepositoryContract(contractLabel(target), async () => {
    const { db, cleanup } = await mongoHarness(target, () => null)();
    return { settings: new MongoOrganizationSettingsRepository(db), newOrganization: (name: string) => insertOrganization(db, name), cleanup };
  });
});

describe('usage document mappers and queries', () => {
  const run = (over: Partial<Run>): Run => ({
    id: 1, organizationId: 1, workflowId: 1, definitionId: 1, name: 'r', mode: 'outbound', status: 'completed', disposition: 'busy', campaignId: null,
    attemptId: null, telephonyConfigurationId: null, provider: null, providerCallId: null, callerNumber: '+1555.0100', calledNumber: null,
    initialContext: {}, gatheredContext: {}, logs: [], annotations: {}, costInfo: { call_duration_seconds: 0, service_token_usage: 0, charge_usd: 0 },
    durationSeconds: null, transcriptKey: null, recordingKey: null, createdAt: new Date(1000), startedAt: null, endedAt: null, updatedAt: new Date(1000), ...over,
  });
  const cases: Array<[string, UsageFilter, Run, boolean]> = [
    ['regex metacharacters are literal', { callerNumberContains: ['5.0'] }, run({}), true],
    ['a dot is not a wildcard', { callerNumberContains: ['555x0'] }, run({ callerNumber: '+1555x0100' }), true],
    ['a dot is not a wildcard (no match)', { callerNumberContains: ['5.0'] }, run({ callerNumber: '+1555x0100' }), false],
    ['a missing number never matches', { calledNumberContains: ['1'] }, run({}), false],
    ['a missing duration counts as 0 (min 0)', { durationMin: 0 }, run({}), true],
    ['a missing duration counts as 0 (min 1)', { durationMin: 1 }, run({}), false],
    ['a missing duration counts as 0 (max 0)', { durationMax: 0 }, run({}), true],
    ['duration bounds are inclusive', { durationMin: 60, durationMax: 60 }, run({ durationSeconds: 60 }), true],
    ['dispositions', { dispositions: ['voicemail', 'busy'] }, run({}), true],
    ['no disposition never matches', { dispositions: ['busy'] }, run({ disposition: null }), false],
    ['dates inclusive', { createdFrom: new Date(1000), createdTo: new Date(1000) }, run({}), true],
  ];
  it.each(cases)('%s: the query agrees with matchesUsageFilter', (_name, filter, r, expected) => {
    expect(matchesUsageFilter(r, filter)).toBe(expected);
    expect(new Query(usageQuery(1, filter) as Record<string, unknown>).test(runToDocument(r, 0) as unknown as Record<string, unknown>)).toBe(expected);
    expect(runToDocument(r, 0).statusRank).toBe(RUN_STATUS_RANK.completed);
  });

  it('maps organization settings both ways', () => {
    const d = organizationSettingsToDocument({ organizationId: 4, pricePerMinuteUsd: 0.25, updatedAt: new Date(5) });
    expect(d).toEqual({ _id: 4, pricePerMinuteUsd: 0.25, updatedAt: new Date(5) });
    expect(organizationSettingsFromDocument(d)).toEqual({ organizationId: 4, pricePerMinuteUsd: 0.25, updatedAt: new Date(5) });
  });
});
