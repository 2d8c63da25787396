import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ValidationIssue } from '../core/errors.js';
import type { AiProviderCatalog } from '../core/ports/ai-service-provider-catalog.port.js';
import type { AiProviderPlugin } from '../core/ports/ai-service-provider.port.js';
import type { TelephonyProviderCatalog } from '../core/ports/telephony-provider-catalog.port.js';
import type { ProviderConfig, ProviderPlugin } from '../core/ports/telephony-provider.port.js';
import { sensitiveFieldNames } from '../core/telephony/credential-mask.js';
import type { JsonSchema } from '../http/routing/route.js';
import { compileValidator, type CompiledValidator } from '../http/validation/ajv.js';
import { BUILT_IN_PROVIDER_PLUGINS } from './provider-registry.builtins.js';
import { aiProviderMetadata, configMemberSchema, configUnionSchema, providerMetadata } from './provider-registry.schemas.js';
import { isAiProviderPlugin, isDefinedProviderPlugin, validateProviderManifest } from './sdk.js';

/** A provider plugin that cannot be loaded or registered; start-up stops with this message. */
export class ProviderPluginLoadError extends Error {
  constructor(readonly source: string, reason: string) {
    super(`provider plugin "${source}": ${reason}`);
    this.name = 'ProviderPluginLoadError';
  }
}

export interface ProviderRegistryOptions {
  /** Passed to plugins' `validateConfig` hooks (ARI endpoint and AI `base_url` SSRF policy). */
  allowPrivateNetwork: boolean;
}

type AnyProviderPlugin = ProviderPlugin | AiProviderPlugin;
type ConfigCheck = { ok: true; config: ProviderConfig } | { ok: false; issues: ValidationIssue[] };

/** Schema, then the plugin's own hook: the one validation path of carriers and model providers. */
function checkConfig(
  plugin: AnyProviderPlugin | undefined, validate: CompiledValidator | undefined, ids: string[], config: Record<string, unknown>, allowPrivateNetwork: boolean,
): ConfigCheck {
  if (!plugin || !validate) {
    return { ok: false, issues: [{ loc: ['provider'], msg: `Input should be one of ${ids.map((i) => `'${i}'`).join(', ')}`, type: 'union_tag_invalid' }] };
  }
  const data = structuredClone(config);
  const issues = validate(data).map((i) => ({ ...i, loc: i.loc.slice(1) }));
  if (issues.length) return { ok: false, issues };
  const clean: ProviderConfig = {};
  for (const f of plugin.manifest.fields) {
    const v = (data as Record<string, unknown>)[f.name];
    if (v !== undefined && v !== null) clean[f.name] = v;
  }
  let extra: Array<[string, string]> = [];
  try {
    extra = plugin.validateConfig?.(clean, { allowPrivateNetwork }) ?? [];
  } catch (e) {
    extra = [['provider', `configuration check failed: ${(e as Error)?.message ?? 'error'}`]];
  }
  if (extra.length) return { ok: false, issues: extra.map(([field, msg]) => ({ loc: [field], msg, type: 'value_error' })) };
  return { ok: true, config: clean };
}

const NO_PROVIDER_SCHEMA: JsonSchema = {
  type: 'object', required: ['provider'], properties: { provider: { type: 'string' } }, additionalProperties: true,
  description: 'No AI provider plugin is registered on this server.',
};

/**
 * The model providers of a registry (API.md 10): the AI side of the same plugin framework. The registry owns
 * the plugins; this view lists, describes and validates only those whose manifest declares llm/stt/tts.
 */
export class AiProviderRegistry implements AiProviderCatalog {
  constructor(
    private readonly plugins: Map<string, { plugin: AiProviderPlugin; source: string }>,
    private readonly validators: Map<string, CompiledValidator>,
    private readonly options: ProviderRegistryOptions,
  ) {}

  ids(): string[] {
    return [...this.plugins.keys()];
  }

  get(provider: string): AiProviderPlugin | null {
    return this.plugins.get(provider)?.plugin ?? null;
  }

  list(): AiProviderPlugin[] {
    return [...this.plugins.values()].map((p) => p.plugin);
  }

  /** `GET /organizations/ai-services/metadata`. */
  metadata() {
    return { providers: this.list().map((p) => aiProviderMetadata(p.manifest)) };
  }

  /**
   * The `config` union of the create body (OpenAPI `oneOf`, sensitive fields writeOnly). With no model provider
   * registered (an embedder's registry) it is a plain object with `provider`, which the use case refuses.
   */
  configSchema(): JsonSchema {
    if (this.plugins.size === 0) return NO_PROVIDER_SCHEMA;
    return configUnionSchema(this.list().map((p) => p.manifest), { metadataPath: '/organizations/ai-services/metadata' });
  }

  /** The `config` union of the PUT body (partial members). */
  configUpdateSchema(): JsonSchema {
    if (this.plugins.size === 0) return NO_PROVIDER_SCHEMA;
    return configUnionSchema(this.list().map((p) => p.manifest), { partial: true, metadataPath: '/organizations/ai-services/metadata' });
  }

  validateConfig(config: Record<string, unknown>): ConfigCheck {
    const provider = typeof config?.provider === 'string' ? config.provider : '';
    return checkConfig(this.plugins.get(provider)?.plugin, this.validators.get(provider), this.ids(), config, this.options.allowPrivateNetwork);
  }
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
  private readonly aiPlugins = new Map<string, { plugin: AiProviderPlugin; source: string }>();
  /** The model providers (llm, stt, tts); the telephony methods of this class never list them. */
  readonly ai: AiProviderRegistry;

  constructor(private readonly options: ProviderRegistryOptions = { allowPrivateNetwork: true }) {
    this.ai = new AiProviderRegistry(this.aiPlugins, this.validators, options);
  }

  /** Built-in plugins only (synchronous; tests and embedders). */
  static builtIn(options?: ProviderRegistryOptions, plugins: readonly AnyProviderPlugin[] = BUILT_IN_PROVIDER_PLUGINS): ProviderRegistry {
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
    options: { builtIns?: readonly AnyProviderPlugin[]; importer?: PluginImporter } = {},
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
        throw new ProviderPluginLoadError(spec, 'does not default-export a value made by defineProviderPlugin() from callplane/plugins/sdk (or defineAiProviderPlugin() for a model provider)');
      }
      r.register(plugin, spec);
    }
    return r;
  }

  /**
   * Adds a plugin: a carrier joins the telephony side, a model provider (kinds llm/stt/tts) the `ai` side;
   * ids are unique across both. Throws `ProviderPluginLoadError` on an invalid manifest or a taken id.
   */
  register(plugin: AnyProviderPlugin, source: string = plugin.manifest?.id ?? '?'): void {
    const problems = validateProviderManifest(plugin.manifest);
    if (problems.length) throw new ProviderPluginLoadError(source, `invalid manifest: ${problems.join('; ')}`);
    const id = plugin.manifest.id;
    const taken = this.plugins.get(id) ?? this.aiPlugins.get(id);
    if (taken) throw new ProviderPluginLoadError(source, `provider id "${id}" is already registered by ${taken.source}`);
    if (isAiProviderPlugin(plugin)) this.aiPlugins.set(id, { plugin, source });
    else this.plugins.set(id, { plugin, source });
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

  /** Every sensitive field name of every manifest, carriers and model providers alike: logs redact them. */
  sensitiveFieldNames(): string[] {
    return sensitiveFieldNames([...this.list(), ...this.ai.list()].map((p) => p.manifest));
  }

  accountIdOf(provider: string, config: ProviderConfig): string {
    const p = this.get(provider);
    if (!p) throw new Error(`no provider plugin "${provider}"`);
    return p.deriveAccountId(config);
  }

  validateConfig(config: Record<string, unknown>): ConfigCheck {
    const provider = typeof config?.provider === 'string' ? config.provider : '';
    return checkConfig(this.plugins.get(provider)?.plugin, this.validators.get(provider), this.ids(), config, this.options.allowPrivateNetwork);
  }
}
