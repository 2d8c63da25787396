import { describe, expect, it } from '@jest/globals';
import { ProviderApiError } from '../errors.js';
import { silentLogger } from '../ports/logger.port.js';
import type { CredentialsCheckResult, TelephonyProvider } from '../ports/telephony-provider.port.js';
import { CheckCredentials } from './check-credentials.use-case.js';
import type { CredentialsCheck, TelephonyConfiguration } from './telephony-configuration.js';

const NOW = new Date('2026-11-24T10:00:00.000Z');
const configuration = {
  id: 7, organizationId: 3, name: 'Main', provider: 'acme', isDefaultOutbound: false, accountId: 'acc', secretsKeyId: 'k',
  settings: {}, secrets: {}, credentialsCheck: null, createdAt: NOW, updatedAt: NOW,
} satisfies TelephonyConfiguration;

function setup(check: (() => Promise<CredentialsCheckResult>) | undefined, timeoutMs = 50) {
  const recorded: Array<{ organizationId: number; id: number; check: CredentialsCheck }> = [];
  const repo = {
    recordCredentialsCheck: async (organizationId: number, id: number, c: CredentialsCheck) => {
      recorded.push({ organizationId, id, check: c });
      return { ...configuration, credentialsCheck: c };
    },
  };
  const provider = (check ? { checkCredentials: check } : {}) as unknown as TelephonyProvider;
  const useCase = new CheckCredentials(repo, { forConfiguration: () => provider }, { now: () => NOW }, silentLogger, timeoutMs);
  return { useCase, recorded };
}

describe('CheckCredentials', () => {
  it("records the provider's answer with the time it was asked", async () => {
    const { useCase, recorded } = setup(async () => ({ ok: true, message: 'Account AC1 is active' }));
    const c = await useCase.execute(configuration);
    expect(c.credentialsCheck).toEqual({ ok: true, message: 'Account AC1 is active', checkedAt: NOW });
    expect(recorded).toEqual([{ organizationId: 3, id: 7, check: { ok: true, message: 'Account AC1 is active', checkedAt: NOW } }]);
  });

  it('turns a provider that does not answer within the bound into ok: false', async () => {
    const { useCase } = setup(() => new Promise<CredentialsCheckResult>(() => undefined), 30);
    const started = Date.now();
    const c = await useCase.execute(configuration);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(c.credentialsCheck).toEqual({ ok: false, message: 'The provider did not answer the credentials check within 30 ms', checkedAt: NOW });
  });

  it('turns a throwing check, garbage, or a plugin without the method into ok: false, never an exception', async () => {
    const thrown = await setup(async () => {
      throw new ProviderApiError('acme', 'Acme refused the credentials (HTTP 401)');
    }).useCase.execute(configuration);
    expect(thrown.credentialsCheck).toMatchObject({ ok: false, message: 'Credentials check failed: Acme refused the credentials (HTTP 401)' });
    const garbage = await setup(async () => ({ ok: 'yes' }) as never).useCase.execute(configuration);
    expect(garbage.credentialsCheck).toMatchObject({ ok: false });
    const missing = await setup(undefined).useCase.execute(configuration);
    expect(missing.credentialsCheck).toMatchObject({ ok: false, message: 'The "acme" provider plugin cannot check credentials' });
  });

  it('keeps at most 500 characters of a message', async () => {
    const { useCase } = setup(async () => ({ ok: false, message: 'x'.repeat(2000) }));
    expect((await useCase.execute(configuration)).credentialsCheck!.message).toHaveLength(500);
  });
});
