/** Time, injectable so unit tests control it. */
export const Clock = Symbol.for('callplane.Clock');
export interface Clock {
  /** The current instant. Never throws. */
  now(): Date;
}

/** The system clock. */
export const systemClock: Clock = { now: () => new Date() };
