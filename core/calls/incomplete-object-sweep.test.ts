import { describe, expect, it } from '@jest/globals';
import { silentLogger } from '../ports/logger.port.js';
import { VirtualTimeline } from '../../test/fakes/virtual-timeline.js';
import { IncompleteObjectSweep } from './incomplete-object-sweep.js';

describe('IncompleteObjectSweep', () => {
  it('sweeps at start and then every period, with the cutoff olderThanMs before now, until stopped; a failing round is retried next time', async () => {
    const t = new VirtualTimeline('2026-01-05T09:00:00.000Z');
    const cutoffs: string[] = [];
    let fail = false;
    const store = {
      sweepIncomplete: async (before: Date) => {
        cutoffs.push(before.toISOString());
        if (fail) throw new Error('bucket unreachable');
        return 2;
      },
    };
    const sweep = new IncompleteObjectSweep({ store, clock: t.clock, timers: t, log: silentLogger }, { everyMs: 60_000, olderThanMs: 3_600_000 });
    sweep.start();
    await t.advance(0);
    expect(cutoffs).toEqual(['2026-01-05T08:00:00.000Z']);
    fail = true;
    await t.advance(60_000);
    expect(cutoffs).toHaveLength(2);
    fail = false;
    await t.advance(60_000);
    expect(cutoffs).toEqual(['2026-01-05T08:00:00.000Z', '2026-01-05T08:01:00.000Z', '2026-01-05T08:02:00.000Z']);
    sweep.stop();
    await t.advance(600_000);
    expect(cutoffs).toHaveLength(3);
    expect(await sweep.runOnce()).toBe(2);
  });
});
