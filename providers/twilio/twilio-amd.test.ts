import { describe, expect, it } from '@jest/globals';
import { isMachineAnswer, mapTwilioStatus, twilioAmdResult } from './twilio.status-map.js';

describe('Twilio AnsweredBy → AmdResult (the one table)', () => {
  it('normalizes every documented value', () => {
    expect(twilioAmdResult('human')).toEqual({ verdict: 'human', source: 'carrier', reason: 'answered_by=human' });
    expect(twilioAmdResult('unknown')).toEqual({ verdict: 'unknown', source: 'carrier', reason: 'answered_by=unknown' });
    expect(twilioAmdResult('machine_start', '2450')).toEqual({ verdict: 'machine', source: 'carrier', reason: 'answered_by=machine_start after 2450 ms' });
    expect(twilioAmdResult('machine_end_beep')).toMatchObject({ verdict: 'machine', greetingEnded: { beep: true } });
    expect(twilioAmdResult('machine_end_silence')).toMatchObject({ verdict: 'machine', greetingEnded: { beep: false } });
    expect(twilioAmdResult(' Machine_End_Other ')).toMatchObject({ verdict: 'machine', greetingEnded: { beep: false } });
    expect(twilioAmdResult('fax')).toEqual({ verdict: 'machine', source: 'carrier', reason: 'answered_by=fax' });
  });

  it('knows nothing of absent or undocumented values', () => {
    expect(twilioAmdResult(undefined)).toBeNull();
    expect(twilioAmdResult('')).toBeNull();
    expect(twilioAmdResult('robot')).toBeNull();
  });

  it('the voicemail outcome and the answer-URL hang-up follow the same table', () => {
    for (const v of ['machine_start', 'machine_end_beep', 'machine_end_silence', 'machine_end_other', 'fax']) {
      expect(isMachineAnswer(v)).toBe(true);
      expect(mapTwilioStatus('completed', v)).toEqual({ status: 'completed', outcome: 'voicemail' });
    }
    for (const v of ['human', 'unknown', 'robot', undefined]) {
      expect(isMachineAnswer(v)).toBe(false);
      expect(mapTwilioStatus('completed', v)).toEqual({ status: 'completed', outcome: 'completed' });
    }
  });
});
