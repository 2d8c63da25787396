import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import { silentLogger } from '../../core/ports/logger.port.js';
import type {
  NormalizedCallEvent,
  PlaceCallRequest,
  PlacedCall,
  ProviderConfig,
  ProviderContext,
  ProviderPlugin,
  TelephonyProvider,
  WebhookRequest,
} from '../../core/ports/telephony-provider.port.js';
import { maskValue, presentCredentials, restoreMaskedSecrets } from '../../core/telephony/credential-mask.js';
import { ProviderRegistry } from '../../plugins/provider-registry.js';
import { isDefinedProviderPlugin, validateProviderManifest } from '../../plugins/sdk.js';

/** Field names that look like secrets; such a field must be `sensitive` unless the harness explains why not. */
export const SECRET_LOOKING_NAME = /(token|secret|passw|pwd|private|credential|signing|(^|_)key$|api_?key)/i;

/** A recorded webhook in a plugin's `fixtures/` directory (JSON). */
export interface ProviderFixture {
  description?: string;
  /** Which parser the fixture feeds: the instance's status parser (default) or the plugin's inbound parser. */
  hook?: 'status' | 'inbound';
  request: Partial<WebhookRequest>;
  /** Matched with `toMatchObject` against the parser's result when given. */
  expected?: Record<string, unknown>;
}

export interface PlaceCallHarness {
  /** Starts whatever the provider talks to (a fake API) and returns the config pointing at it. */
  setup(): Promise<{ config: ProviderConfig; teardown(): Promise<void> }>;
  request: PlaceCallRequest;
  /** Asserts on what the provider sent (read from the fake) and what placeCall returned. */
  verify(placed: PlacedCall, reported: NormalizedCallEvent[]): Promise<void> | void;
}

export interface ProviderContractHarness {
  plugin: ProviderPlugin;
  /** The plugin's `fixtures/` directory. */
  fixturesDir: string;
  /** A complete, valid config (after defaults). */
  validConfig: ProviderConfig;
  /** A valid config of another account (its account id must differ). */
  otherAccountConfig: ProviderConfig;
  /** Secret-looking field names that are public for this provider, each with the reason. */
  publicFieldsThatLookSecret?: Record<string, string>;
  placeCall: PlaceCallHarness;
}

export function fakeProviderContext(reported: NormalizedCallEvent[] = []): ProviderContext {
  return {
    publicUrl: 'https://callplane.example.com',
    allowPrivateNetwork: true,
    log: silentLogger,
    reportStatus: async (e) => {
      reported.push(e);
    },
    reportInbound: async () => ({ refused: 'phone_number_not_found' }),
  };
}

const GARBAGE: unknown[] = [
  null, undefined, 0, 'text', [], [1, 2], { body: null }, { body: 'x' }, { body: [] }, { body: { event: null } },
  { body: { CallStatus: 42, CallSid: {} } }, { headers: null, body: {} }, { body: { ['__proto__']: { polluted: true } } },
  { body: Object.create(null) }, { body: { x: 'y'.repeat(100_000) } }, { query: 'a=b', body: {} }, { runId: 'NaN', body: {} },
];

/** The contract every telephony provider plugin runs (docs/providers.md). */
export function runTelephonyProviderContract(label: string, harness: () => ProviderContractHarness): void {
  describe(`telephony provider contract: ${label}`, () => {
    const instances: TelephonyProvider[] = [];
    const make = (config: ProviderConfig, reported: NormalizedCallEvent[] = []) => {
      const h = harness();
      const p = h.plugin.create({ ...config, configurationId: 1, organizationId: 1 }, fakeProviderContext(reported));
      instances.push(p);
      return p;
    };
    afterEach(async () => {
      await Promise.all(instances.splice(0).map((p) => p.close()));
    });

    it('is made by defineProviderPlugin with a valid, frozen manifest', () => {
      const { plugin } = harness();
      expect(isDefinedProviderPlugin(plugin)).toBe(true);
      expect(validateProviderManifest(plugin.manifest)).toEqual([]);
      expect(Object.isFrozen(plugin.manifest)).toBe(true);
      expect(Object.isFrozen(plugin.manifest.fields[0])).toBe(true);
    });

    it('marks every secret-looking field sensitive (or says why not)', () => {
      const { plugin, publicFieldsThatLookSecret = {} } = harness();
      const offenders = plugin.manifest.fields
        .filter((f) => SECRET_LOOKING_NAME.test(f.name) && !f.sensitive && !publicFieldsThatLookSecret[f.name])
        .map((f) => f.name);
      expect(offenders).toEqual([]);
      for (const f of plugin.manifest.fields.filter((x) => x.type === 'password')) expect(f.sensitive).toBe(true);
    });

    it('accepts its valid configs through the registry and refuses a missing required field', () => {
      const { plugin, validConfig, otherAccountConfig } = harness();
      const registry = ProviderRegistry.builtIn(undefined, [plugin]);
      for (const c of [validConfig, otherAccountConfig]) {
        const r = registry.validateConfig({ ...c, provider: plugin.manifest.id, from_numbers: ['+15550000000'] });
        expect(r).toEqual({ ok: true, config: expect.any(Object) });
        if (r.ok) expect(r.config).not.toHaveProperty('from_numbers');
      }
      const required = plugin.manifest.fields.find((f) => f.required && f.default === undefined);
      if (required) {
        const { [required.name]: _dropped, ...rest } = validConfig;
        const r = registry.validateConfig({ ...rest, provider: plugin.manifest.id });
        expect(r.ok).toBe(false);
        if (!r.ok) expect(r.issues.map((i) => i.loc)).toContainEqual([required.name]);
      }
      const meta = registry.metadata().providers[0]!;
      expect(meta).toMatchObject({ provider: plugin.manifest.id, display_name: plugin.manifest.displayName });
      expect(meta.fields.map((f) => f.name)).toEqual(plugin.manifest.fields.map((f) => f.name));
      expect(registry.sensitiveFieldNames()).toEqual(plugin.manifest.fields.filter((f) => f.sensitive).map((f) => f.name).sort());
    });

    it('masks sensitive values and restores them only on an exact mask match', () => {
      const { plugin, validConfig } = harness();
      const shown = presentCredentials(plugin.manifest, validConfig);
      for (const f of plugin.manifest.fields) {
        const v = validConfig[f.name];
        if (!f.sensitive) expect(shown[f.name]).toEqual(v ?? null);
        else if (typeof v === 'string') {
          expect(shown[f.name]).toHaveLength(v.length);
          if (v.length > 4) expect(shown[f.name]).not.toEqual(v);
        }
      }
      // a retrieved configuration sent back unchanged keeps every secret
      expect(restoreMaskedSecrets(plugin.manifest, validConfig, shown)).toEqual(presentCredentialsUnmasked(plugin, validConfig));
      // a changed value replaces it
      const sensitive = plugin.manifest.fields.find((f) => f.sensitive && typeof validConfig[f.name] === 'string');
      if (sensitive) {
        const other = { ...shown, [sensitive.name]: `*${String(maskValue(validConfig[sensitive.name]))}` };
        expect(restoreMaskedSecrets(plugin.manifest, validConfig, other)[sensitive.name]).toBe(other[sensitive.name]);
      }
    });

    it('derives a stable account id that secrets do not move and other accounts do not share', () => {
      const { plugin, validConfig, otherAccountConfig } = harness();
      const id = plugin.deriveAccountId(validConfig);
      expect(typeof id).toBe('string');
      expect(id.length).toBeGreaterThan(0);
      expect(plugin.deriveAccountId(structuredClone(validConfig))).toBe(id);
      expect(plugin.deriveAccountId(Object.fromEntries(Object.entries(validConfig).reverse()))).toBe(id);
      const rotated = { ...validConfig };
      for (const f of plugin.manifest.fields) if (f.sensitive && typeof rotated[f.name] === 'string') rotated[f.name] = `${rotated[f.name] as string}-rotated`;
      expect(plugin.deriveAccountId(rotated)).toBe(id);
      expect(plugin.deriveAccountId(otherAccountConfig)).not.toBe(id);
    });

    it('parses every recorded fixture without throwing, as each expects', () => {
      const { plugin, fixturesDir, validConfig } = harness();
      const files = readdirSync(fixturesDir).filter((f) => f.endsWith('.json'));
      expect(files.length).toBeGreaterThan(0);
      const provider = make(validConfig);
      for (const file of files) {
        const fx = JSON.parse(readFileSync(join(fixturesDir, file), 'utf8')) as ProviderFixture;
        const request = { publicUrl: 'https://callplane.example.com/api/v1/telephony/x', method: 'POST', headers: {}, query: {}, body: {}, ...fx.request } as WebhookRequest;
        let result: unknown;
        if (fx.hook === 'inbound') {
          expect(plugin.parseInboundCall).toBeDefined();
          result = plugin.parseInboundCall!(request);
        } else {
          result = provider.parseStatusCallback(request);
          expect(['status', 'ignored']).toContain((result as NormalizedCallEvent).kind);
          if ((result as NormalizedCallEvent).kind === 'ignored') expect((result as { reason: string }).reason).toEqual(expect.any(String));
        }
        if (fx.expected) expect({ file, result }).toMatchObject({ file, result: fx.expected });
      }
    });

    it('never throws on garbage webhooks (status, inbound, signature)', () => {
      const { plugin, validConfig } = harness();
      const provider = make(validConfig);
      for (const g of GARBAGE) {
        const req = g as WebhookRequest;
        expect(() => provider.parseStatusCallback(req)).not.toThrow();
        expect(() => provider.verifyWebhook(req)).not.toThrow();
        if (plugin.parseInboundCall) expect(() => plugin.parseInboundCall!(req)).not.toThrow();
        const r = provider.parseStatusCallback(req);
        expect(['status', 'ignored']).toContain(r.kind);
      }
      expect(Object.prototype).not.toHaveProperty('polluted');
    });

    it('answers inbound refusals with provider markup', () => {
      const { plugin } = harness();
      if (!plugin.inboundReject) return;
      for (const reason of ['phone_number_not_found', 'workflow_archived'] as const) {
        const m = plugin.inboundReject(reason);
        expect(m.contentType).toEqual(expect.any(String));
        expect(m.body.length).toBeGreaterThan(0);
      }
    });

    it('places a call as the provider expects it', async () => {
      const h = harness();
      const { config, teardown } = await h.placeCall.setup();
      try {
        const reported: NormalizedCallEvent[] = [];
        const provider = make(config, reported);
        const placed = await provider.placeCall(h.placeCall.request);
        expect(placed.providerCallId).toEqual(expect.any(String));
        expect(placed.alreadyPlaced).toBe(false);
        await h.placeCall.verify(placed, reported);
      } finally {
        await teardown();
      }
    });

    it('closes idempotently', async () => {
      const { validConfig } = harness();
      const p = make(validConfig);
      await p.close();
      await expect(p.close()).resolves.toBeUndefined();
    });
  });
}

function presentCredentialsUnmasked(plugin: ProviderPlugin, config: ProviderConfig): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of plugin.manifest.fields) out[f.name] = config[f.name] ?? null;
  return out;
}
