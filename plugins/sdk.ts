/**
 * The provider SDK (`callplane/plugins/sdk`): everything a telephony provider plugin needs, and nothing of
 * the host (no express, no inversify, no storage). A plugin package default-exports
 * `defineProviderPlugin({ manifest, deriveAccountId, create, ... })`; settings name the packages to load
 * (CALLPLANE_PROVIDER_PLUGINS). docs/providers.md walks through the simulator as the example.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { AiProviderPlugin } from '../core/ports/ai-service-provider.port.js';
import type { ProviderPlugin } from '../core/ports/telephony-provider.port.js';
import { AI_PROVIDER_KINDS, kindsOf, PROVIDER_KINDS, type CredentialField, type ProviderManifest } from '../core/telephony/provider-manifest.js';

export type {
  CallOutcome,
  InboundCall,
  InboundRefusal,
  NormalizedCallEvent,
  PlaceCallRequest,
  PlacedCall,
  ProviderConfig,
  ProviderContext,
  ProviderHealth,
  ProviderMarkup,
  ProviderPlugin,
  TelephonyProvider,
  WebhookAuth,
  WebhookRequest,
} from '../core/ports/telephony-provider.port.js';
export type { CredentialField, CredentialFieldType, MediaDeclaration, ProviderKind, ProviderManifest } from '../core/telephony/provider-manifest.js';
export type { AiProviderDeps, AiProviderPlugin, ConnectPermit, SpeechProviderDeps } from '../core/ports/ai-service-provider.port.js';
export type { SpeechToText, SttEvent, SttStream, SttStreamOptions } from '../core/ports/speech-to-text.port.js';
export type { TextToSpeech, TtsAudio, TtsRequest } from '../core/ports/text-to-speech.port.js';
export type { AudioEncoding, AudioFormat } from '../core/voice/audio-format.js';
export { AsyncQueue } from './async-queue.js';
export { abortError } from './abort-error.js';
export { audioBodyChunks, type AudioBodyOptions } from './audio-body.js';
export { allocPayload, base64Payload, decodeBase64Payload, utf8Text } from './media-payload.js';
export type {
  ChatMessage, FinishReason, LanguageModel, LanguageModelEvent, StreamRequest, StructuredRequest, StructuredResult, TokenUsage, ToolCall, ToolSpec,
} from '../core/ports/language-model.port.js';
export type { RunStatus } from '../core/runs/run.js';
export type { Logger } from '../core/ports/logger.port.js';
export { ProviderApiError, ValidationError } from '../core/errors.js';
export { MAX_CALL_DURATION_SECONDS, callDurationProblem } from '../core/calls/call-duration.js';
export { maskSecret } from '../core/telephony/credential-mask.js';
export { jsonOrNull, parseRetryAfter, providerHttp, retryDelayMs } from './provider-http.js';
export type { ProviderHttp, ProviderHttpOptions, ProviderHttpRequest, ProviderHttpResponse, RetryPolicy } from './provider-http.js';
export {
  clampRingSeconds,
  configString,
  dropUndefined,
  formParams,
  headerValue,
  lastParam,
  requireCallerNumber,
  syncFailure,
  trimmedString,
  withPlus,
} from './provider-helpers.js';
export {
  assertConnectable,
  checkUrlShape,
  classifyAddress,
  METADATA_HOSTS,
  NetworkPolicyError,
  pinnedLookup,
  policyFetch,
} from './network-policy.js';
export type {
  AddressClass,
  ConnectTarget,
  HostResolver,
  NetworkPolicyErrorCode,
  NetworkPolicyOptions,
  PolicyFetchInit,
  ResolvedAddress,
} from './network-policy.js';
export { markProviderFault, providerFaultOf, registerFaultClaimer } from './provider-faults.js';
export type { FaultClaimer, ProviderFault } from './provider-faults.js';

/** Field names the host owns inside `config`; a manifest may not declare them. */
export const RESERVED_FIELD_NAMES = ['provider', 'from_numbers'] as const;

/** JSON Schema (2020-12) of a provider manifest. */
export const providerManifestSchema = {
  $id: 'https://callplane.dev/schemas/provider-manifest.json',
  $defs: {
    audioFormat: {
      type: 'object',
      required: ['encoding', 'sampleRate'],
      additionalProperties: false,
      properties: { encoding: { enum: ['mulaw', 'alaw', 'l16'] }, sampleRate: { enum: [8000, 16000, 22050, 24000, 44100, 48000] } },
    },
  },
  type: 'object',
  required: ['id', 'displayName', 'docsUrl', 'fields', 'mediaTransport'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', pattern: '^[a-z][a-z0-9_]{0,31}$', description: 'lower-case identifier, the `provider` discriminator' },
    displayName: { type: 'string', minLength: 1, maxLength: 100 },
    docsUrl: { type: 'string', pattern: '^https?://\\S+$' },
    mediaTransport: { enum: ['websocket', 'ari', 'none'] },
    media: {
      type: 'object',
      required: ['transport', 'inFormat', 'outFormat', 'marks', 'clear', 'hangUp'],
      additionalProperties: false,
      description: "the carrier's media WebSocket both ways (docs/voice.md, Carriers and media framing)",
      properties: {
        transport: { enum: ['websocket'] },
        inFormat: { $ref: '#/$defs/audioFormat' },
        outFormat: { $ref: '#/$defs/audioFormat' },
        marks: { enum: ['native', 'emulated'] },
        clear: { enum: ['native', 'emulated'] },
        hangUp: { enum: ['close', 'rest'] },
      },
    },
    capabilities: {
      type: 'object',
      additionalProperties: false,
      description: 'call-control features beyond placing and ending calls (docs/voice.md, Transfers)',
      properties: { transfer: { type: 'boolean' } },
    },
    kinds: {
      type: 'array', minItems: 1, uniqueItems: true, items: { enum: [...PROVIDER_KINDS] },
      description: 'telephony (a carrier; the default when absent) or any of llm, stt, tts (a model provider), never both',
    },
    fields: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'label', 'type', 'required', 'sensitive', 'description', 'placeholder'],
        additionalProperties: false,
        properties: {
          name: { type: 'string', pattern: '^[a-z][a-z0-9_]{0,63}$', not: { enum: [...RESERVED_FIELD_NAMES] } },
          label: { type: 'string', minLength: 1, maxLength: 100 },
          type: { enum: ['string', 'password', 'url', 'boolean', 'string_array', 'textarea'] },
          required: { type: 'boolean' },
          sensitive: { type: 'boolean' },
          description: { type: 'string' },
          placeholder: { type: 'string' },
          default: { type: ['string', 'boolean', 'number', 'array'] },
          constraints: { type: 'object' },
          valueType: { enum: ['integer'] },
          schemes: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: ['http', 'https', 'ws', 'wss'] } },
        },
      },
    },
  },
} as const;

const ajv = new Ajv2020({ allErrors: true, strict: false });
const validateManifestSchema = ajv.compile(providerManifestSchema);

function defaultMatches(f: CredentialField): boolean {
  const d = f.default;
  if (d === undefined) return true;
  if (f.valueType === 'integer') return Number.isInteger(d);
  switch (f.type) {
    case 'boolean':
      return typeof d === 'boolean';
    case 'string_array':
      return Array.isArray(d) && d.every((x) => typeof x === 'string');
    default:
      return typeof d === 'string';
  }
}

/** Every problem of `manifest` as readable lines; empty when it is valid. */
export function validateProviderManifest(manifest: unknown): string[] {
  if (!validateManifestSchema(manifest)) {
    return (validateManifestSchema.errors ?? []).map((e) => `manifest${e.instancePath.replace(/\//g, '.')}: ${e.message}${e.keyword === 'not' ? ' (reserved field name)' : ''}`);
  }
  const m = manifest as ProviderManifest;
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const f of m.fields) {
    if (seen.has(f.name)) problems.push(`manifest.fields: duplicate field "${f.name}"`);
    seen.add(f.name);
    if (!defaultMatches(f)) problems.push(`manifest.fields.${f.name}: default does not match type ${f.valueType ?? f.type}`);
    if (f.valueType === 'integer' && f.type !== 'string') problems.push(`manifest.fields.${f.name}: valueType integer needs type "string"`);
    if (f.schemes && f.type !== 'url') problems.push(`manifest.fields.${f.name}: schemes needs type "url"`);
  }
  const kinds = kindsOf(m);
  if (kinds.includes('telephony') && kinds.length > 1) problems.push('manifest.kinds: a provider is either telephony or a model provider (llm, stt, tts), not both');
  if (!kinds.includes('telephony') && m.mediaTransport !== 'none') problems.push('manifest.mediaTransport: a model provider carries no call media ("none")');
  if (!kinds.includes('telephony') && m.media) problems.push('manifest.media: a model provider carries no call media');
  if (!kinds.includes('telephony') && m.capabilities) problems.push('manifest.capabilities: a model provider has no call control');
  return problems;
}

export class ProviderPluginDefinitionError extends Error {
  constructor(readonly problems: string[], id: string) {
    super(`invalid provider plugin "${id}": ${problems.join('; ')}`);
  }
}

/** Marks values made by `defineProviderPlugin` (a global symbol: it survives duplicate copies of the SDK). */
export const PROVIDER_PLUGIN_BRAND = Symbol.for('callplane.providerPlugin');

function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v as object)) deepFreeze(x);
  }
  return v;
}

/**
 * Checks a plugin (its manifest against `providerManifestSchema`, its hooks are functions) and returns it
 * frozen and branded. Throws `ProviderPluginDefinitionError` listing every problem.
 */
export function defineProviderPlugin(plugin: ProviderPlugin): ProviderPlugin {
  const id = String((plugin as Partial<ProviderPlugin>)?.manifest?.id ?? '?');
  const problems = plugin && typeof plugin === 'object' ? validateProviderManifest(plugin.manifest) : ['not an object'];
  if (plugin && typeof plugin === 'object' && plugin.manifest && !kindsOf(plugin.manifest).includes('telephony')) {
    problems.push('manifest.kinds: defineProviderPlugin makes carriers (kind telephony); model providers use defineAiProviderPlugin');
  }
  if (plugin && typeof plugin === 'object') {
    if (typeof plugin.deriveAccountId !== 'function') problems.push('deriveAccountId must be a function');
    if (typeof plugin.create !== 'function') problems.push('create must be a function');
    for (const hook of ['validateConfig', 'parseInboundCall', 'inboundReject'] as const) {
      if (plugin[hook] !== undefined && typeof plugin[hook] !== 'function') problems.push(`${hook} must be a function when given`);
    }
    if (plugin.webhookAuth !== undefined && plugin.webhookAuth !== 'signature' && plugin.webhookAuth !== 'organization-credentials') {
      problems.push('webhookAuth must be "signature" or "organization-credentials" when given');
    }
  }
  if (problems.length) throw new ProviderPluginDefinitionError(problems, id);
  const copy = { ...plugin, manifest: structuredClone(plugin.manifest) };
  Object.defineProperty(copy, PROVIDER_PLUGIN_BRAND, { value: true, enumerable: false });
  return deepFreeze(copy);
}

/** True for a value returned by `defineProviderPlugin` or `defineAiProviderPlugin`. */
export const isDefinedProviderPlugin = (v: unknown): v is ProviderPlugin | AiProviderPlugin =>
  Boolean(v && typeof v === 'object' && (v as Record<symbol, unknown>)[PROVIDER_PLUGIN_BRAND] === true);

/** True for a plugin whose manifest declares model kinds (llm, stt, tts) rather than telephony. */
export const isAiProviderPlugin = (v: ProviderPlugin | AiProviderPlugin): v is AiProviderPlugin => !kindsOf(v.manifest).includes('telephony');

/**
 * The model-provider counterpart of `defineProviderPlugin` (API.md 10): the manifest must declare kinds among
 * llm, stt, tts and mediaTransport `none`; a plugin of kind `llm` must have `createLanguageModel`. Returns the
 * plugin frozen and branded (loadable from CALLPLANE_PROVIDER_PLUGINS like a carrier). Throws
 * `ProviderPluginDefinitionError` listing every problem.
 */
export function defineAiProviderPlugin(plugin: AiProviderPlugin): AiProviderPlugin {
  const id = String((plugin as Partial<AiProviderPlugin>)?.manifest?.id ?? '?');
  const problems = plugin && typeof plugin === 'object' ? validateProviderManifest(plugin.manifest) : ['not an object'];
  if (plugin && typeof plugin === 'object' && plugin.manifest) {
    const kinds = kindsOf(plugin.manifest);
    if (!plugin.manifest.kinds?.length || !kinds.every((k) => AI_PROVIDER_KINDS.includes(k))) {
      problems.push(`manifest.kinds: a model provider declares kinds among ${AI_PROVIDER_KINDS.join(', ')}`);
    }
    for (const hook of ['validateConfig', 'createLanguageModel', 'createSpeechToText', 'createTextToSpeech'] as const) {
      if (plugin[hook] !== undefined && typeof plugin[hook] !== 'function') problems.push(`${hook} must be a function when given`);
    }
    if (kinds.includes('llm') && typeof plugin.createLanguageModel !== 'function') problems.push('createLanguageModel must be a function for kind llm');
  }
  if (problems.length) throw new ProviderPluginDefinitionError(problems, id);
  const copy = { ...plugin, manifest: structuredClone(plugin.manifest) };
  Object.defineProperty(copy, PROVIDER_PLUGIN_BRAND, { value: true, enumerable: false });
  return deepFreeze(copy);
}
