import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';

export type SignupPolicy = 'first-user' | 'open' | 'closed';
export type StorageKind = 'sqlite' | 'mongodb';
export type ProcessRole = 'api' | 'worker' | 'all';

/** Every setting of the service, typed and validated. Read once at start from the environment. */
export interface Settings {
  port: number;
  host: string;
  dataDir: string;
  publicUrl: string;
  signup: SignupPolicy;
  /** Null when not given: resolved by `ensureSecretKey` (generated into the data directory). */
  secretKey: string | null;
  storage: StorageKind;
  mongodbUri: string | null;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  role: ProcessRole;
  tokenTtlHours: number;
  /** npm package names (or absolute paths) of third-party provider plugins to load. */
  providerPlugins: string[];
  /** Whether provider endpoints the server connects to (ARI) may be private-network addresses. */
  allowPrivateNetwork: boolean;
  /** Base URL of the Google Sheets CSV export (tests point it at a local server). */
  googleSheetsBaseUrl: string;
  /** Largest accepted JSON body, in bytes. */
  maxJsonBodyBytes: number;
  /** Campaign engine and job timings, in ms (docs/api.md "Uploads and campaigns"). */
  campaignEngine: {
    leaseMs: number;
    reconcileAfterMs: number;
    maxCallMs: number;
    sweepIntervalMs: number;
    jobProcessEveryMs: number;
    jobLockLifetimeMs: number;
  };
  /** Event webhook sender (docs/webhooks.md); absent: the defaults shown there. */
  webhooks?: {
    leaseMs: number;
    sweepIntervalMs: number;
    maxInFlight: number;
    maxInFlightPerEndpoint: number;
  };
  /**
   * Talking calls (docs/voice.md "Making calls talk"): `vad` `silero` (default; the energy detector when its model
   * cannot load) or `energy` (CALLPLANE_VOICE_VAD); `vadInference`, where Silero runs: `thread` (default; a
   * worker thread of its own, inline when it cannot start or stops) or `inline` (on the event loop;
   * CALLPLANE_VOICE_VAD_INFERENCE). Absent: the defaults.
   */
  voice?: { vad: 'silero' | 'energy'; vadInference?: 'thread' | 'inline' };
  /** Media WebSocket limits (docs/api.md "Media streams"). */
  media: {
    maxMessageBytes: number;
    maxSessions: number;
    idleTimeoutMs: number;
    startTimeoutMs: number;
    tokenTtlSeconds: number;
    maxRecordingBytes: number;
  };
}

export class SettingsError extends Error {
  constructor(readonly variable: string, message: string) {
    super(`invalid setting ${variable}: ${message}`);
  }
}

type Env = Record<string, string | undefined>;

function pick<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const v = env[name]?.trim();
  if (v === undefined || v === '') return fallback;
  if (!(allowed as readonly string[]).includes(v)) throw new SettingsError(name, `"${v}" must be one of ${allowed.join(', ')}`);
  return v as T;
}

function int(env: Env, name: string, min: number, max: number, fallback: number): number {
  const v = env[name]?.trim();
  if (v === undefined || v === '') return fallback;
  if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) throw new SettingsError(name, `"${v}" must be an integer from ${min} to ${max}`);
  return Number(v);
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const v = env[name]?.trim().toLowerCase();
  if (v === undefined || v === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new SettingsError(name, `"${v}" must be true or false`);
}

function httpUrl(name: string, v: string): string {
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new SettingsError(name, `"${v}" is not a URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new SettingsError(name, 'must be an http or https URL');
  return v.replace(/\/+$/, '');
}

/** Parses and validates the environment. Throws `SettingsError` naming the first bad variable. */
export function loadSettings(env: Env = process.env): Settings {
  const port = int(env, 'PORT', 1, 65535, 8000);
  const host = env.HOST?.trim() || '127.0.0.1';
  if (!/^[\w.:\-[\]]+$/.test(host)) throw new SettingsError('HOST', `"${host}" is not a host name or address`);
  const storage = pick(env, 'CALLPLANE_STORAGE', ['sqlite', 'mongodb'] as const, 'sqlite');
  const mongodbUri = env.MONGODB_URI?.trim() || null;
  if (mongodbUri && !/^mongodb(\+srv)?:\/\//.test(mongodbUri)) throw new SettingsError('MONGODB_URI', 'must start with mongodb:// or mongodb+srv://');
  if (storage === 'mongodb' && !mongodbUri) throw new SettingsError('MONGODB_URI', 'is required when CALLPLANE_STORAGE=mongodb');
  const secretKey = env.CALLPLANE_SECRET_KEY?.trim() || null;
  if (secretKey !== null && secretKey.length < 32) throw new SettingsError('CALLPLANE_SECRET_KEY', 'must be at least 32 characters');
  const displayHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  const publicUrl = env.CALLPLANE_PUBLIC_URL?.trim()
    ? httpUrl('CALLPLANE_PUBLIC_URL', env.CALLPLANE_PUBLIC_URL.trim())
    : `http://${displayHost}:${port}`;
  return {
    port,
    host,
    dataDir: resolve(env.CALLPLANE_DATA_DIR?.trim() || './data'),
    publicUrl,
    signup: pick(env, 'CALLPLANE_SIGNUP', ['first-user', 'open', 'closed'] as const, 'first-user'),
    secretKey,
    storage,
    mongodbUri,
    logLevel: pick(env, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    role: pick(env, 'CALLPLANE_ROLE', ['api', 'worker', 'all'] as const, 'all'),
    tokenTtlHours: int(env, 'CALLPLANE_TOKEN_TTL_HOURS', 1, 24 * 365, 24 * 7),
    providerPlugins: (env.CALLPLANE_PROVIDER_PLUGINS ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    allowPrivateNetwork: bool(env, 'CALLPLANE_ALLOW_PRIVATE_NETWORK', true),
    googleSheetsBaseUrl: httpUrl('CALLPLANE_GOOGLE_SHEETS_URL', env.CALLPLANE_GOOGLE_SHEETS_URL?.trim() || 'https://docs.google.com'),
    maxJsonBodyBytes: int(env, 'CALLPLANE_MAX_BODY_BYTES', 1024, 50 * 1024 * 1024, 1024 * 1024),
    campaignEngine: {
      leaseMs: int(env, 'CALLPLANE_CAMPAIGN_LEASE_MS', 100, 3_600_000, 60_000),
      reconcileAfterMs: int(env, 'CALLPLANE_CAMPAIGN_RECONCILE_MS', 100, 86_400_000, 300_000),
      maxCallMs: int(env, 'CALLPLANE_CAMPAIGN_MAX_CALL_MS', 1000, 86_400_000, 4 * 3_600_000),
      sweepIntervalMs: int(env, 'CALLPLANE_CAMPAIGN_SWEEP_MS', 100, 3_600_000, 30_000),
      jobProcessEveryMs: int(env, 'CALLPLANE_JOBS_PROCESS_EVERY_MS', 20, 60_000, 2_000),
      jobLockLifetimeMs: int(env, 'CALLPLANE_JOBS_LOCK_LIFETIME_MS', 500, 3_600_000, 120_000),
    },
    webhooks: {
      leaseMs: int(env, 'CALLPLANE_WEBHOOK_LEASE_MS', 1000, 3_600_000, 60_000),
      sweepIntervalMs: int(env, 'CALLPLANE_WEBHOOK_SWEEP_MS', 100, 3_600_000, 15_000),
      maxInFlight: int(env, 'CALLPLANE_WEBHOOK_MAX_IN_FLIGHT', 1, 10_000, 64),
      maxInFlightPerEndpoint: int(env, 'CALLPLANE_WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT', 1, 10_000, 16),
    },
    voice: {
      vad: pick(env, 'CALLPLANE_VOICE_VAD', ['silero', 'energy'] as const, 'silero'),
      vadInference: pick(env, 'CALLPLANE_VOICE_VAD_INFERENCE', ['thread', 'inline'] as const, 'thread'),
    },
    media: {
      maxMessageBytes: int(env, 'CALLPLANE_MEDIA_MAX_MESSAGE_BYTES', 1024, 16 * 1024 * 1024, 64 * 1024),
      maxSessions: int(env, 'CALLPLANE_MEDIA_MAX_SESSIONS', 1, 100_000, 500),
      idleTimeoutMs: int(env, 'CALLPLANE_MEDIA_IDLE_TIMEOUT_MS', 100, 3_600_000, 30_000),
      startTimeoutMs: int(env, 'CALLPLANE_MEDIA_START_TIMEOUT_MS', 100, 600_000, 10_000),
      tokenTtlSeconds: int(env, 'CALLPLANE_MEDIA_TOKEN_TTL_SECONDS', 10, 86_400, 900),
      maxRecordingBytes: int(env, 'CALLPLANE_MEDIA_MAX_RECORDING_BYTES', 8_000, 4 * 1024 * 1024 * 1024 - 1024, 8_000 * 3600 * 4),
    },
  };
}

/**
 * The secret key: the configured one, else the one generated earlier into `<dataDir>/secret.key`, else a new
 * one written there with mode 600. Reused across restarts so encrypted secrets and signed links stay valid.
 */
export function ensureSecretKey(settings: Settings): string {
  if (settings.secretKey) return settings.secretKey;
  mkdirSync(settings.dataDir, { recursive: true, mode: 0o700 });
  const file = join(settings.dataDir, 'secret.key');
  if (existsSync(file)) {
    const key = readFileSync(file, 'utf8').trim();
    if (key.length < 32) throw new SettingsError('CALLPLANE_SECRET_KEY', `${file} holds a key shorter than 32 characters`);
    return key;
  }
  const key = randomBytes(32).toString('base64url');
  try {
    writeFileSync(file, key + '\n', { mode: 0o600, flag: 'wx' });
  } catch (e) {
    // another process starting at the same moment wrote it first: use theirs
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return ensureSecretKey(settings);
    throw e;
  }
  chmodSync(file, 0o600);
  return key;
}
