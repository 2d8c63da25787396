import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { PinoLogger } from '../adapters/logging/pino-logger.js';
import type { SecretCipher } from '../core/ports/crypto.port.js';
import type { ProviderPlugin, TelephonyProvider } from '../core/ports/telephony-provider.port.js';
import { presentCredentials, restoreMaskedSecrets } from '../core/telephony/credential-mask.js';
import { CredentialVault } from '../core/telephony/credential-vault.js';
import simulator from '../providers/simulator/index.js';
import { startTestService } from '../test/support/test-service.js';
import { ProviderPluginLoadError, ProviderRegistry } from './provider-registry.js';
import { defineProviderPlugin, isDefinedProviderPlugin, ProviderPluginDefinitionError } from './sdk.js';

/** A test-only provider whose `pin` field's sensitivity is the only thing that varies. */
function pinPlugin(sensitive: boolean): ProviderPlugin {
  return defineProviderPlugin({
    manifest: {
      id: 'pinbox', displayName: 'Pin box', docsUrl: 'https://example.com/pinbox', mediaTransport: 'none',
      fields: [
        { name: 'account', label: 'Account', type: 'string', required: true, sensitive: false, description: 'account', placeholder: 'acme' },
        { name: 'pin', label: 'PIN', type: 'string', required: true, sensitive, description: 'the account PIN', placeholder: '123456' },
      ],
    },
    deriveAccountId: (c) => String(c.account),
    create: () => ({ close: async () => {} }) as unknown as TelephonyProvider,
  });
}

const fakeCipher: SecretCipher = { encrypt: (p, ctx) => `enc(${ctx})`, decrypt: () => '"x"' };

describe('provider registry: everything follows the manifest', () => {
  it.each([true, false])('flipping sensitive=%s on a field changes metadata, schema, masking, restore, storage and log redaction', async (sensitive) => {
    const registry = ProviderRegistry.builtIn(undefined, [simulator, pinPlugin(sensitive)]);
    const plugin = registry.get('pinbox')!;
    // metadata
    const meta = registry.metadata().providers.find((p) => p.provider === 'pinbox')!;
    expect(meta.fields.find((f) => f.name === 'pin')!.sensitive).toBe(sensitive);
    // ajv/OpenAPI schema: writeOnly
    const member = (registry.configSchema().oneOf as Array<{ properties: Record<string, { writeOnly?: boolean; const?: string }> }>)
      .find((m) => m.properties.provider!.const === 'pinbox')!;
    expect(member.properties.pin!.writeOnly === true).toBe(sensitive);
    // masking and restore
    const stored = { account: 'acme', pin: '987654' };
    const shown = presentCredentials(plugin.manifest, stored);
    expect(shown.pin).toBe(sensitive ? '**7654' : '987654');
    expect(restoreMaskedSecrets(plugin.manifest, stored, { pin: '**7654' }).pin).toBe(sensitive ? '987654' : '**7654');
    // at rest: secrets side or clear side
    const sealed = new CredentialVault(fakeCipher).seal(plugin.manifest, 1, 'k', stored);
    expect('pin' in sealed.secrets).toBe(sensitive);
    expect('pin' in sealed.settings).toBe(!sensitive);
    // log redaction
    expect(registry.sensitiveFieldNames().includes('pin')).toBe(sensitive);
    const lines: string[] = [];
    const logger = PinoLogger.create({
      level: 'info', extraSensitive: registry.sensitiveFieldNames(),
      destination: new Writable({ write: (c, _e, cb) => { lines.push(String(c)); cb(); } }),
    });
    logger.info({ pin: '987654', nested: { pin: '987654' } }, 'x');
    expect(lines.join('').includes('987654')).toBe(!sensitive);
    // the API, end to end, with no other edit
    const svc = await startTestService({ providers: registry });
    try {
      const { token } = await svc.signup();
      const r = await svc.post('/organizations/telephony-configs', { name: 'p', config: { provider: 'pinbox', account: 'acme', pin: '987654' } }, { token });
      expect(r.status).toBe(200);
      expect(r.body.credentials).toEqual({ account: 'acme', pin: sensitive ? '**7654' : '987654' });
      const row = svc.db.prepare('SELECT settings, secrets FROM telephony_configurations WHERE id = ?').get(r.body.id) as { settings: string; secrets: string };
      expect(row.settings.includes('987654')).toBe(!sensitive);
      expect(Object.keys(JSON.parse(row.secrets))).toEqual(sensitive ? ['pin'] : []);
      const back = await svc.put(`/organizations/telephony-configs/${r.body.id}`, { config: r.body.credentials }, { token });
      expect(back.body.credentials).toEqual(r.body.credentials);
      const missing = await svc.post('/organizations/telephony-configs', { name: 'q', config: { provider: 'pinbox', account: 'acme' } }, { token });
      expect(missing.status).toBe(422);
      expect(missing.body.detail[0].loc).toEqual(['body', 'config', 'pin']);
    } finally {
      await svc.close();
    }
  });

  it('validates configs: defaults, unknown fields and from_numbers dropped, null optional removed, plugin hook issues', () => {
    const hooked = defineProviderPlugin({
      ...pinPlugin(true),
      manifest: { ...pinPlugin(true).manifest, id: 'hooked' },
      validateConfig: (c, ctx) => (c.account === 'internal' && !ctx.allowPrivateNetwork ? [['account', 'private accounts are not allowed']] : []),
    });
    const strict = ProviderRegistry.builtIn({ allowPrivateNetwork: false }, [simulator, hooked]);
    expect(strict.validateConfig({ provider: 'simulator', api_key: null, from_numbers: ['+1'], junk: 1 })).toEqual({
      ok: true, config: { account_id: 'simulator', ring_ms: 300, talk_ms: 1000 },
    });
    expect(strict.validateConfig({ provider: 'hooked', account: 'internal', pin: '1' })).toEqual({
      ok: false, issues: [{ loc: ['account'], msg: 'private accounts are not allowed', type: 'value_error' }],
    });
    expect(ProviderRegistry.builtIn({ allowPrivateNetwork: true }, [hooked]).validateConfig({ provider: 'hooked', account: 'internal', pin: '1' }).ok).toBe(true);
    expect(strict.validateConfig({ provider: 'zzz' })).toMatchObject({ ok: false, issues: [{ loc: ['provider'], type: 'union_tag_invalid' }] });
    const original = { provider: 'simulator', ring_ms: 1 };
    strict.validateConfig(original);
    expect(original).toEqual({ provider: 'simulator', ring_ms: 1 });
    expect(strict.accountIdOf('hooked', { account: 'acme' })).toBe('acme');
  });
});

describe('defineProviderPlugin', () => {
  it('freezes and brands a valid plugin', () => {
    const p = pinPlugin(true);
    expect(isDefinedProviderPlugin(p)).toBe(true);
    expect(Object.isFrozen(p.manifest.fields)).toBe(true);
    expect(isDefinedProviderPlugin({ ...p })).toBe(false);
  });

  it('lists every manifest problem', () => {
    const bad = () => defineProviderPlugin({
      manifest: {
        id: 'Bad Id', displayName: '', docsUrl: 'ftp://x', mediaTransport: 'none',
        fields: [
          { name: 'provider', label: 'x', type: 'string', required: true, sensitive: false, description: '', placeholder: '' },
        ],
      },
      deriveAccountId: () => 'x',
      create: () => ({}) as TelephonyProvider,
    });
    expect(bad).toThrow(ProviderPluginDefinitionError);
    try {
      bad();
    } catch (e) {
      const msg = (e as Error).message;
      expect(msg).toContain('manifest.id');
      expect(msg).toContain('manifest.displayName');
      expect(msg).toContain('reserved field name');
    }
    const dupDefault = () => defineProviderPlugin({
      ...pinPlugin(true),
      manifest: {
        ...pinPlugin(true).manifest,
        fields: [
          { name: 'a', label: 'A', type: 'boolean', required: false, sensitive: false, description: '', placeholder: '', default: 'yes' },
          { name: 'a', label: 'A', type: 'string', required: false, sensitive: false, description: '', placeholder: '' },
        ],
      },
    });
    expect(dupDefault).toThrow(/duplicate field "a".*|default does not match/);
  });
});

describe('third-party provider plugins named in settings', () => {
  const dir = mkdtempSync(join(tmpdir(), 'callplane-plugins-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const manifest = (id: string) => ({
    id, displayName: id, docsUrl: 'https://example.com', mediaTransport: 'none',
    fields: [{ name: 'secret_token', label: 'Token', type: 'password', required: true, sensitive: true, description: '', placeholder: '' }],
  });
  const writePlugin = (file: string, branded: boolean, id = 'acmetel') => {
    const path = join(dir, file);
    writeFileSync(path, `export default { ${branded ? "[Symbol.for('callplane.providerPlugin')]: true," : ''}
      manifest: ${JSON.stringify(manifest(id))}, deriveAccountId: () => 'acct', create: () => ({ close: async () => {} }) };\n`);
    return path;
  };

  it('loads a plugin package by path; its fields join metadata and log redaction', async () => {
    const path = writePlugin('good.mjs', true);
    const r = await ProviderRegistry.load({ providerPlugins: [path], allowPrivateNetwork: true }, { builtIns: [simulator] });
    expect(r.ids()).toEqual(['simulator', 'acmetel']);
    expect(r.sensitiveFieldNames()).toEqual(['api_key', 'secret_token']);
  });

  it('stops start-up with a clear message naming the bad plugin', async () => {
    const unbranded = writePlugin('plain.mjs', false);
    await expect(ProviderRegistry.load({ providerPlugins: [unbranded], allowPrivateNetwork: true })).rejects.toThrow(
      new ProviderPluginLoadError(unbranded, 'does not default-export a value made by defineProviderPlugin() from callplane/plugins/sdk (or defineAiProviderPlugin() for a model provider)'),
    );
    await expect(ProviderRegistry.load({ providerPlugins: ['callplane-provider-does-not-exist'], allowPrivateNetwork: true })).rejects.toThrow(
      /provider plugin "callplane-provider-does-not-exist": cannot be imported/,
    );
    const clash = writePlugin('clash.mjs', true, 'simulator');
    await expect(ProviderRegistry.load({ providerPlugins: [clash], allowPrivateNetwork: true }, { builtIns: [simulator] })).rejects.toThrow(/provider id "simulator" is already registered by built-in/);
    const importer = async () => ({ default: Object.assign(Object.create(null), { [Symbol.for('callplane.providerPlugin')]: true, manifest: { id: 'x' } }) });
    await expect(ProviderRegistry.load({ providerPlugins: ['pkg'], allowPrivateNetwork: true }, { importer })).rejects.toThrow(/provider plugin "pkg": invalid manifest/);
  });
});
