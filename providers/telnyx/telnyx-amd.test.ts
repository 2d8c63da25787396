import { describe, expect, it } from '@jest/globals';
import { telnyxAmdResult } from './telnyx.status-map.js';

describe('Telnyx AMD webhooks → AmdResult', () => {
  it('call.machine.detection.ended: human, machine, not_sure (and the premium variant)', () => {
    expect(telnyxAmdResult('call.machine.detection.ended', 'human')).toEqual({ verdict: 'human', source: 'carrier', reason: 'telnyx result=human' });
    expect(telnyxAmdResult('call.machine.detection.ended', 'machine')).toEqual({ verdict: 'machine', source: 'carrier', reason: 'telnyx result=machine' });
    expect(telnyxAmdResult('call.machine.detection.ended', 'not_sure')).toMatchObject({ verdict: 'unknown' });
    expect(telnyxAmdResult('call.machine.detection.ended', undefined)).toMatchObject({ verdict: 'unknown', reason: 'telnyx result=unknown' });
    expect(telnyxAmdResult('call.machine.premium.detection.ended', 'human_business')).toMatchObject({ verdict: 'human', reason: 'telnyx premium result=human_business' });
    expect(telnyxAmdResult('call.machine.premium.detection.ended', 'fax_detected')).toMatchObject({ verdict: 'machine' });
  });

  it('call.machine.greeting.ended: a machine whose greeting is over, with or without a beep', () => {
    expect(telnyxAmdResult('call.machine.greeting.ended', 'beep_detected')).toEqual({
      verdict: 'machine', source: 'carrier', reason: 'telnyx greeting ended (beep_detected)', greetingEnded: { beep: true },
    });
    expect(telnyxAmdResult('call.machine.greeting.ended', 'ended')).toMatchObject({ greetingEnded: { beep: false } });
    expect(telnyxAmdResult('call.machine.premium.greeting.ended', 'no_beep_detected')).toMatchObject({ greetingEnded: { beep: false } });
  });

  it('other events are not AMD', () => {
    expect(telnyxAmdResult('call.answered', 'human')).toBeNull();
    expect(telnyxAmdResult('call.hangup', undefined)).toBeNull();
  });
});
