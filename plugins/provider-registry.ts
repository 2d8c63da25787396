import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ValidationIssue } from '../core/errors.js';
import type { TelephonyProviderCatalog } from '../core/ports/telephony-provider-catalog.port.js';
import type { ProviderConfig, ProviderPlugin } from '../core/ports/telephony-provider.port.js';
import { sensitiveFieldNames } from '../core/telephony/credential-mask.js';
import type { JsonSchema } from '../http/routing/route.js';
import { compileValidator, type CompiledValidator } from '../http/validation/ajv.js';
import { BUILT_IN_PROVIDER_PLUGINS } from './provider-registry.builtins.js';
import { configMemberSchema, configUnionSchema, providerMetadata } from './provider-registry.schemas.js';
import { isDefinedProviderPlugin, validateProviderManifest } from './sdk.js';

/** A provider plugin that cannot be loaded or registered; start-up stops with this message. */
export class ProviderPluginLoadError extends Error {
  constructor(readonly source: string, reason: string) {
    super(`provider plugin "${source}": ${reason}`);
    this.name = 'ProviderPluginLoadError';
  }
}

export interface ProviderRegistryOptions {
  /** Passed to plugins' `validateConfig` hooks (ARI endpoint SSRF policy). */
  allowPrivateNetwork: boolean;
}

/** How a plugin named in settings is imported (tests inject one). */
export type PluginImporter = (specifier: string) => Promise<Record<string, unknown>>;

const defaultImporter: PluginImporter = (spec) => import(spec) as Promise<Record<string, unknown>>;

/** Package names are imported as they are; relative and absolute paths as file URLs. */
export function pluginSpecifier(spec: string): string {
  return spec.startsWith('.') || spec.startsWith('/') || /^[A-Za-z]:[\\/]/.test(spec) ? pathToFileURL(resolve(spec)).href : spec;
}

/**
 * The registered provider plugins: built-ins plus third-party packages named in settings. Everything
 * about providers that the rest of the service needs is derived here from the manifests: metadata, the
 * `config` schemas, validation, sensitive names for log redaction, account ids.
 */
export class ProviderRegistry implements TelephonyProviderCatalog {
  private readonly plugins = new Map<string, { plugin: ProviderPlugin; source: string }>();
  private readonly validators = new Map<string, CompiledValidator>();

  constructor(private readonly options: ProviderRegistryOptions = { allowPrivateNetwork: true }) {}

  /** Built-in plugins only (synchronous; tests and embedders). */
  static builtIn(options?: ProviderRegistryOptions, plugins: readonly ProviderPlugin[] = BUILT_IN_PROVIDER_PLUGINS): ProviderRegistry {
    const r = new ProviderRegistry(options);
    for (const p of plugins) r.register(p, 'built-in');
    return r;
  }

  /**
   * Built-ins plus each plugin of `settings.providerPlugins` (npm package names or paths), imported
   * dynamically; each must default-export a `defineProviderPlugin(...)` value. Throws
   * `ProviderPluginLoadError` naming the first bad plugin.
   */
  static async load(
    settings: { providerPlugins: readonly string[]; allowPrivateNetwork: boolean },
    options: { builtIns?: readonly ProviderPlugin[]; importer?: PluginImporter } = {},
  ): Promise<ProviderRegistry> {
    const r = ProviderRegistry.builtIn({ allowPrivateNetwork: settings.allowPrivateNetwork }, options.builtIns ?? BUILT_IN_PROVIDER_PLUGINS);
    const importer = options.importer ?? defaultImporter;
    for (const spec of settings.providerPlugins) {
      let mod: Record<string, unknown>;
      try {
        mod = await importer(pluginSpecifier(spec));
      } catch (e) {
        throw new ProviderPluginLoadError(spec, `cannot be imported: ${(e as Error)?.message ?? String(e)}`);
      }
      const plugin = mod?.default;
      if (!isDefinedProviderPlugin(plugin)) {
        throw new ProviderPluginLoadError(spec, 'does not default-export a value made by defineProviderPlugin() from callplane/plugins/sdk');
      }
      r.register(plugin, spec);
    }
    return r;
  }

  /** Adds a plugin. Throws `ProviderPluginLoadError` on an invalid manifest or a taken id. */
  register(plugin: ProviderPlugin, source: string = plugin.manifest?.id ?? '?'): void {
    const problems = validateProviderManifest(plugin.manifest);
    if (problems.length) throw new ProviderPluginLoadError(source, `invalid manifest: ${problems.join('; ')}`);
    const id = plugin.manifest.id;
    const taken = this.plugins.get(id);
    if (taken) throw new ProviderPluginLoadError(source, `provider id "${id}" is already registered by ${taken.source}`);
    this.plugins.set(id, { plugin, source });
    this.validators.set(id, compileValidator(configMemberSchema(plugin.manifest), 'body'));
  }

  ids(): string[] {
    return [...this.plugins.keys()];
  }

  get(provider: string): ProviderPlugin | null {
    return this.plugins.get(provider)?.plugin ?? null;
  }

  list(): ProviderPlugin[] {
    return [...this.plugins.values()].map((p) => p.plugin);
  }

  /** `GET /organizations/telephony-providers/metadata`. */
  metadata() {
    return { providers: this.list().map((p) => providerMetadata(p.manifest)) };
  }

  /** The `config` union of the create body. */
  configSchema(): JsonSchema {
    return configUnionSchema(this.list().map((p) => p.manifest));
  }

  /** The `config` union of the PUT body (partial members). */
  configUpdateSchema(): JsonSchema {
    return configUnionSchema(this.list().map((p) => p.manifest), { partial: true });
  }

  /** Every sensitive field name of every manifest: logs redact them. */
  sensitiveFieldNames(): string[] {
    return sensitiveFieldNames(this.list().map((p) => p.manifest));
  }

  accountIdOf(provider: string, config: ProviderConfig): string {
    const p = this.get(provider);
    if (!p) throw new Error(`no provider plugin "${provider}"`);
    return p.deriveAccountId(config);
  }

  validateConfig(config: Record<string, unknown>): { ok: true; config: ProviderConfig } | { ok: false; issues: ValidationIssue[] } {
    const provider = typeof config?.provider === 'string' ? config.provider : '';
    const entry = this.plugins.get(provider);
    const validate = this.validators.get(provider);
    if (!entry || !validate) {
      return { ok: false, issues: [{ loc: ['provider'], msg: `Input should be one of ${this.ids().map((i) => `'${i}'`).join(', ')}`, type: 'union_tag_invalid' }] };
    }
    const data = structuredClone(config);
    const issues = validate(data).map((i) => ({ ...i, loc: i.loc.slice(1) }));
    if (issues.length) return { ok: false, issues };
    const clean: ProviderConfig = {};
    for (const f of entry.plugin.manifest.fields) {
      const v = (data as Record<string, unknown>)[f.name];
      if (v !== undefined && v !== null) clean[f.name] = v;
    }
    let extra: Array<[string, string]> = [];
    try {
      extra = entry.plugin.validateConfig?.(clean, { allowPrivateNetwork: this.options.allowPrivateNetwork }) ?? [];
    } catch (e) {
      extra = [['provider', `configuration check failed: ${(e as Error)?.message ?? 'error'}`]];
    }
    if (extra.length) return { ok: false, issues: extra.map(([field, msg]) => ({ loc: [field], msg, type: 'value_error' })) };
    return { ok: true, config: clean };
  }
}
