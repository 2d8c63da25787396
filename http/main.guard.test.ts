import { describe, expect, it, jest } from '@jest/globals';
import { ProviderApiError } from '../core/errors.js';
import { markProviderFault } from '../plugins/provider-faults.js';
import { exitOnSignals, handleStrayError, type RunningService } from './main.js';

describe('the process guard', () => {
  it('survives an error attributable to one provider connection', () => {
    const exits: number[] = [];
    const exit = (code: number) => exits.push(code);
    expect(handleStrayError(markProviderFault(new Error('socket blew up'), { provider: 'ari', configurationId: 3 }), 'uncaughtException', exit)).toBe(true);
    expect(handleStrayError(new ProviderApiError('twilio', 'unreachable'), 'unhandledRejection', exit)).toBe(true);
    const fromSdk = new TypeError('cb.redirect is not a function');
    fromSdk.stack = `${fromSdk.message}\n    at x (/app/node_modules/swagger-client/lib/swagger.js:1300:19)`;
    expect(handleStrayError(fromSdk, 'uncaughtException', exit)).toBe(true);
    expect(exits).toEqual([]);
  });

  it('exits 1 after logging an unknown error', () => {
    const exits: number[] = [];
    const write = process.stderr.write;
    const lines: string[] = [];
    process.stderr.write = ((s: string) => lines.push(s) > 0) as unknown as typeof process.stderr.write;
    try {
      expect(handleStrayError(new RangeError('our own bug'), 'uncaughtException', (c) => exits.push(c))).toBe(false);
      expect(handleStrayError('a string', 'unhandledRejection', (c) => exits.push(c))).toBe(false);
    } finally {
      process.stderr.write = write;
    }
    expect(exits).toEqual([1, 1]);
    expect(lines.join('')).toContain('callplane: fatal uncaughtException: RangeError: our own bug');
  });
});

describe('signals while the service starts', () => {
  it('a SIGTERM before the start hooks are done waits for the start, then stops gracefully and exits 0', async () => {
    const before = { term: process.listeners('SIGTERM'), int: process.listeners('SIGINT') };
    const exit = jest.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
    const write = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      let started!: (s: RunningService) => void;
      const stop = jest.fn(async () => undefined);
      exitOnSignals(new Promise<RunningService>((r) => (started = r)));
      process.emit('SIGTERM', 'SIGTERM');
      await new Promise((r) => setTimeout(r, 10));
      // not killed, not stopped yet: the start is still running
      expect(stop).not.toHaveBeenCalled();
      expect(exit).not.toHaveBeenCalled();
      started({ server: null, settings: {} as RunningService['settings'], stop });
      await new Promise((r) => setTimeout(r, 10));
      expect(stop).toHaveBeenCalledTimes(1);
      expect(exit).toHaveBeenCalledWith(0);
    } finally {
      for (const l of process.listeners('SIGINT')) if (!before.int.includes(l)) process.off('SIGINT', l);
      for (const l of process.listeners('SIGTERM')) if (!before.term.includes(l)) process.off('SIGTERM', l);
      exit.mockRestore();
      write.mockRestore();
    }
  });
});
