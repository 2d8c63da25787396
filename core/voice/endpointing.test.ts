import { describe, expect, it } from '@jest/globals';
import { VirtualTimeline } from '../../test/fakes/virtual-timeline.js';
import { Endpointer, type CommittedUtterance } from './endpointing.js';

function setup(options = {}) {
  const timeline = new VirtualTimeline();
  const commits: Array<CommittedUtterance & { at: number }> = [];
  const t0 = timeline.now();
  const ep = new Endpointer(timeline, (u) => commits.push({ ...u, at: timeline.now() - t0 }), options);
  return { timeline, ep, commits, t0 };
}

describe('Endpointer', () => {
  it('commits a final that arrives after the stop once the minimum delay has passed', async () => {
    const { timeline, ep, commits, t0 } = setup();
    ep.speechStarted(t0);
    await timeline.advance(1000);
    ep.speechStopped(timeline.now() - 300);
    await timeline.advance(100);
    ep.finalTranscript('Yes this is Dana', false);
    await timeline.advance(300);
    expect(commits).toEqual([]);
    await timeline.advance(100);
    expect(commits).toMatchObject([{ text: 'Yes this is Dana', at: 1500, by: 'final', speechEndMs: t0 + 700, stoppedAtMs: t0 + 1000, finalAtMs: t0 + 1100 }]);
  });

  it('a final after the minimum delay commits at once; speech_final and utterance_end commit at once', async () => {
    const a = setup();
    a.ep.speechStarted(a.t0);
    a.ep.speechStopped(a.t0);
    await a.timeline.advance(800);
    a.ep.finalTranscript('late', false);
    expect(a.commits).toMatchObject([{ text: 'late', at: 800, by: 'final' }]);

    const b = setup();
    b.ep.speechStarted(b.t0);
    b.ep.finalTranscript('I will', false); // final while still speaking: waits
    b.ep.speechStopped(b.t0);
    await b.timeline.advance(50);
    b.ep.finalTranscript('be there', true);
    expect(b.commits).toMatchObject([{ text: 'I will be there', at: 50, by: 'speech_final' }]);

    const c = setup();
    c.ep.speechStarted(c.t0);
    c.ep.finalTranscript('hello', false);
    c.ep.speechStopped(c.t0);
    await c.timeline.advance(20);
    c.ep.utteranceEnd();
    expect(c.commits).toMatchObject([{ text: 'hello', at: 20, by: 'speech_final' }]);
  });

  it('text final before the stop commits at stop + min delay', async () => {
    const { timeline, ep, commits, t0 } = setup({ minDelayMs: 300 });
    ep.speechStarted(t0);
    ep.finalTranscript('okay', false);
    ep.speechStopped(t0);
    await timeline.advance(299);
    expect(commits).toEqual([]);
    await timeline.advance(1);
    expect(commits).toMatchObject([{ text: 'okay', by: 'final' }]);
  });

  it('falls back to the last interim, or nothing, at the maximum delay', async () => {
    const { timeline, ep, commits, t0 } = setup({ maxDelayMs: 2000 });
    ep.speechStarted(t0);
    ep.interimTranscript('maybe tuesday');
    ep.speechStopped(t0);
    await timeline.advance(2000);
    expect(commits).toMatchObject([{ text: 'maybe tuesday', at: 2000, by: 'max_delay' }]);
    ep.speechStarted(timeline.now());
    ep.speechStopped(timeline.now());
    await timeline.advance(2000);
    expect(commits[1]).toMatchObject({ text: '', by: 'max_delay' });
  });

  it('speech resuming before the commit continues the same turn; finals while idle are ignored', async () => {
    const { timeline, ep, commits, t0 } = setup();
    ep.finalTranscript('noise', true);
    ep.speechStarted(t0);
    ep.finalTranscript('I need to', false);
    ep.speechStopped(t0 + 100);
    await timeline.advance(200);
    ep.speechStarted(timeline.now()); // the caller goes on
    await timeline.advance(1000);
    expect(commits).toEqual([]);
    ep.speechStopped(timeline.now());
    ep.finalTranscript('reschedule', true);
    expect(commits).toMatchObject([{ text: 'I need to reschedule', speechStartMs: t0 }]);
  });
});
