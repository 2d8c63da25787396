/**
 * Structured logging. Implementations redact secrets (tokens, keys, passwords, provider credentials)
 * before anything is written; callers still never pass a secret on purpose.
 */
export const Logger = Symbol.for('callplane.Logger');
export type LogFields = Record<string, unknown>;
export interface Logger {
  debug(fields: LogFields, msg: string): void;
  info(fields: LogFields, msg: string): void;
  warn(fields: LogFields, msg: string): void;
  error(fields: LogFields, msg: string): void;
  /** A logger that adds `fields` to every line. */
  child(fields: LogFields): Logger;
  /** Whether lines of `level` are written (lets hot paths skip building them). Absent: assume yes. */
  isEnabled?(level: 'debug' | 'info' | 'warn' | 'error'): boolean;
}

/** A logger that writes nothing (tests, embedders who bring none). */
export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child() {
    return silentLogger;
  },
  isEnabled() {
    return false;
  },
};
