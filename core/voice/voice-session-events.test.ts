import { describe, expect, it } from '@jest/globals';
import { VoiceSessionEvents } from './voice-session-events.js';

describe('VoiceSessionEvents', () => {
  it('calls the listeners registered when an emit began, whatever they add or remove meanwhile', () => {
    const events = new VoiceSessionEvents();
    const calls: string[] = [];
    const offB = events.on('speech_started', () => calls.push('b'));
    let offA: () => void = () => undefined;
    offA = events.on('speech_started', () => {
      calls.push('a');
      offA(); // itself
      offB(); // one registered before it
      events.on('speech_started', () => calls.push('c')); // a new one
    });
    const offD = events.on('speech_started', () => calls.push('d'));
    events.emit('speech_started', { atMs: 1 });
    expect(calls).toEqual(['b', 'a', 'd']);
    calls.length = 0;
    events.emit('speech_started', { atMs: 2 });
    expect(calls).toEqual(['d', 'c']);
    calls.length = 0;
    offD();
    offD(); // twice: nothing more to remove
    events.emit('speech_started', { atMs: 3 });
    expect(calls).toEqual(['c']);
  });

  it('removes one registration per unsubscribe, and isolates a listener that throws', () => {
    const errors: string[] = [];
    const events = new VoiceSessionEvents((_e, event) => errors.push(event));
    const seen: number[] = [];
    const listener = (e: { atMs: number }) => seen.push(e.atMs);
    const off1 = events.on('speech_started', listener);
    events.on('speech_started', () => {
      throw new Error('boom');
    });
    events.on('speech_started', listener);
    events.emit('speech_started', { atMs: 1 });
    off1();
    events.emit('speech_started', { atMs: 2 });
    expect(seen).toEqual([1, 1, 2]);
    expect(errors).toEqual(['speech_started', 'speech_started']);
  });
});
