import pino, { type DestinationStream, type Logger as Pino } from 'pino';
import type { LogFields, Logger } from '../../core/ports/logger.port.js';

/** Field names whose values never reach a log line, wherever they appear (two levels deep, plus headers). */
export const SENSITIVE_KEYS = [
  'password', 'password_hash', 'passwordHash', 'token', 'api_key', 'apiKey', 'secret', 'auth_token', 'authToken',
  'app_password', 'api_secret', 'private_key', 'signature_secret', 'authorization', 'cookie', 'x-api-key',
  'x-twilio-signature', 'key', 'credentials',
];

export function redactPaths(extra: readonly string[] = []): string[] {
  const keys = [...new Set([...SENSITIVE_KEYS, ...extra])];
  const paths: string[] = [];
  for (const k of keys) {
    const p = /^[A-Za-z_$][\w$]*$/.test(k) ? k : `["${k}"]`;
    const join = (prefix: string) => (p.startsWith('[') ? `${prefix}${p}` : `${prefix}.${p}`);
    paths.push(p, join('*'), join('*.*'), join('req.headers'), join('headers'), join('body'), join('*.config'), join('config'));
  }
  return paths;
}

/** Wraps pino as the core Logger. `extraSensitive` comes from provider manifests (sensitive field names). */
export class PinoLogger implements Logger {
  constructor(readonly pino: Pino) {}
  static create(options: { level: string; extraSensitive?: readonly string[]; destination?: DestinationStream }): PinoLogger {
    const p = pino(
      {
        level: options.level,
        base: { service: 'callplane' },
        timestamp: pino.stdTimeFunctions.isoTime,
        redact: { paths: redactPaths(options.extraSensitive), censor: '[redacted]' },
        formatters: { level: (label) => ({ level: label }) },
      },
      options.destination,
    );
    return new PinoLogger(p);
  }
  debug(fields: LogFields, msg: string) { this.pino.debug(fields, msg); }
  info(fields: LogFields, msg: string) { this.pino.info(fields, msg); }
  warn(fields: LogFields, msg: string) { this.pino.warn(fields, msg); }
  error(fields: LogFields, msg: string) { this.pino.error(fields, msg); }
  child(fields: LogFields): Logger { return new PinoLogger(this.pino.child(fields)); }
  isEnabled(level: 'debug' | 'info' | 'warn' | 'error'): boolean { return this.pino.isLevelEnabled(level); }
}
