import { describe, expect, it } from '@jest/globals';
import type { JobDefinitionOptions, JobHandler, JobScheduler } from '../../core/ports/job-scheduler.port.js';
import { DeferredJobScheduler } from './deferred-job-scheduler.js';

/** Records what reaches the real scheduler, in order. */
function recordingScheduler(log: string[]): JobScheduler {
  const names = new Set<string>();
  return {
    define(name: string, _handler: JobHandler, options?: JobDefinitionOptions) {
      if (names.has(name)) throw new Error(`Job "${name}" is already defined`);
      names.add(name);
      log.push(`define ${name}${options?.concurrency ? ` x${options.concurrency}` : ''}`);
    },
    async scheduleUnique(name, uniqueKey) { log.push(`schedule ${name}/${uniqueKey}`); },
    async every(name, intervalMs) { log.push(`every ${name} ${intervalMs}`); },
    async cancel(name) { log.push(`cancel ${name}`); return 2; },
    async start() { log.push('start'); },
    async stop() { log.push('stop'); },
  };
}

describe('DeferredJobScheduler', () => {
  it('loads nothing until an operation needs the scheduler, then hands over the definitions made before', async () => {
    const log: string[] = [];
    let loads = 0;
    const deferred = new DeferredJobScheduler(async () => {
      loads++;
      return recordingScheduler(log);
    });
    deferred.define('a', async () => undefined, { concurrency: 2 });
    deferred.define('b', async () => undefined);
    expect(() => deferred.define('a', async () => undefined)).toThrow('Job "a" is already defined');
    expect(loads).toBe(0);
    expect(deferred.current).toBeUndefined();

    await Promise.all([deferred.scheduleUnique('a', 'k', new Date(0), {}), deferred.every('b', 1000)]);
    expect(loads).toBe(1);
    expect(log).toEqual(['define a x2', 'define b', 'schedule a/k', 'every b 1000']);
    expect(deferred.current).toBeDefined();

    deferred.define('c', async () => undefined);
    expect(() => deferred.define('b', async () => undefined)).toThrow('Job "b" is already defined');
    expect(await deferred.cancel('c')).toBe(2);
    await deferred.start();
    await deferred.stop();
    expect(log.slice(4)).toEqual(['define c', 'cancel c', 'start', 'stop']);
    expect(loads).toBe(1);
  });

  it('stops without loading when nothing was loaded; a failed load is retried by the next operation', async () => {
    let loads = 0;
    const log: string[] = [];
    const deferred = new DeferredJobScheduler(async () => {
      loads++;
      if (loads === 1) throw new Error('Cannot find package @agendajs/mongo-backend');
      return recordingScheduler(log);
    });
    await deferred.stop();
    expect(loads).toBe(0);
    deferred.define('a', async () => undefined);
    await expect(deferred.start()).rejects.toThrow('Cannot find package');
    await deferred.start();
    expect(loads).toBe(2);
    expect(log).toEqual(['define a', 'start']);
  });
});
