import { describe, expect, it } from '@jest/globals';
import { ScriptedLanguageModel } from '../../../test/fakes/scripted-language-model.js';
import { VirtualTimeline } from '../../../test/fakes/virtual-timeline.js';
import { voicemailSettingsOf, type AmdResult, type VoicemailSettings } from './amd-result.js';
import { VoicemailGate } from './voicemail-gate.js';
import { voicemailPlan, type VoicemailPlan } from './voicemail-policy.js';

const machine: AmdResult = { verdict: 'machine', source: 'heuristic', reason: 'long greeting', decidedAtMs: 2600 };
const human: AmdResult = { verdict: 'human', source: 'heuristic', reason: 'short greeting', decidedAtMs: 1500 };
const unknown: AmdResult = { verdict: 'unknown', source: 'timeout', reason: 'no speech', decidedAtMs: 4000 };
const hangup: VoicemailSettings = { detect: true, action: 'hangup' };
const leave: VoicemailSettings = { detect: true, action: 'leave_message', message: 'Hi {{name}}, please call us back.' };
const render = (t: string) => t.replace('{{name}}', 'Ann');

describe('voicemailPlan (the one rule)', () => {
  it('machine + hangup ends as voicemail; machine + leave_message speaks the rendered message as voicemail_left', () => {
    expect(voicemailPlan(machine, hangup, render)).toEqual({ kind: 'hang_up', result: machine, disposition: 'voicemail' });
    expect(voicemailPlan(machine, leave, render)).toEqual({ kind: 'leave_message', result: machine, message: 'Hi Ann, please call us back.', disposition: 'voicemail_left' });
  });

  it('human, unknown, no decision or detection off converse', () => {
    for (const r of [human, unknown, null]) expect(voicemailPlan(r, leave, render)).toEqual({ kind: 'converse', result: r });
    expect(voicemailPlan(machine, null, render).kind).toBe('converse');
    expect(voicemailPlan(machine, { detect: false, action: 'hangup' }, render).kind).toBe('converse');
  });

  it('a message that renders to nothing leaves nothing: voicemail', () => {
    expect(voicemailPlan(machine, { ...leave, message: '{{missing}}' }, () => '  ')).toMatchObject({ kind: 'hang_up', disposition: 'voicemail' });
    expect(voicemailPlan(machine, { detect: true, action: 'leave_message' }, render)).toMatchObject({ kind: 'hang_up' });
  });

  it('reads workflow_configurations.voicemail tolerantly', () => {
    expect(voicemailSettingsOf({ voicemail: { detect: true, action: 'leave_message', message: 'Call us' } })).toEqual({ detect: true, action: 'leave_message', message: 'Call us' });
    expect(voicemailSettingsOf({ voicemail: { detect: true } })).toEqual({ detect: true, action: 'hangup' });
    expect(voicemailSettingsOf({ voicemail: { detect: false, action: 'hangup' } })).toBeNull();
    expect(voicemailSettingsOf({})).toBeNull();
    expect(voicemailSettingsOf(null)).toBeNull();
  });
});

describe('VoicemailGate on a virtual clock', () => {
  function gate(settings: VoicemailSettings, extra: Partial<ConstructorParameters<typeof VoicemailGate>[0]> = {}) {
    const timeline = new VirtualTimeline();
    const t0 = timeline.now();
    const g = new VoicemailGate({ settings, timers: timeline, render, ...extra });
    let plan: VoicemailPlan | null = null;
    void g.plan.then((p) => (plan = p));
    return { timeline, t0, g, plan: () => plan };
  }

  it('a human: converse once the pause after "Hello?" is long enough; nothing else runs after', async () => {
    const { timeline, t0, g, plan } = gate(hangup);
    await timeline.advance(400);
    g.speechStarted(t0 + 400);
    await timeline.advance(500);
    g.speechStopped(t0 + 800);
    g.transcript('Hello?', true, t0 + 900);
    await timeline.advance(500);
    expect(plan()).toBeNull();
    await timeline.advance(100);
    expect(plan()).toMatchObject({ kind: 'converse', result: { verdict: 'human', decidedAtMs: t0 + 1500 } });
    expect(timeline.pendingCount).toBe(0);
  });

  it('a machine with hangup: hang_up at the decision', async () => {
    const { timeline, t0, g, plan } = gate(hangup);
    g.speechStarted(t0 + 300);
    await timeline.advance(1000);
    g.transcript("Hi, you've reached Sam. I can't come to the phone", false, t0 + 1000);
    await timeline.advance(1);
    expect(plan()).toMatchObject({ kind: 'hang_up', disposition: 'voicemail', result: { verdict: 'machine', reason: 'voicemail phrase "cannot take the call"' } });
  });

  it('a machine with leave_message waits for the greeting end (silence), then the message', async () => {
    const { timeline, t0, g, plan } = gate(leave);
    g.speechStarted(t0 + 300);
    await timeline.advance(3000);
    expect(g.result?.verdict).toBe('machine');
    expect(plan()).toBeNull();
    g.speechStopped(t0 + 4200);
    await timeline.advance(2600); // t0 + 5600: 1400 ms of silence
    expect(plan()).toBeNull();
    await timeline.advance(200);
    expect(plan()).toEqual({ kind: 'leave_message', result: g.result, message: 'Hi Ann, please call us back.', disposition: 'voicemail_left' });
    expect(g.log.map((e) => e.type)).toEqual(['decision', 'greeting_ended']);
  });

  it('asks the model once for an unsure greeting and acts on its answer', async () => {
    const timeline = new VirtualTimeline();
    const model = new ScriptedLanguageModel({ sleep: timeline.sleep }).onExtract({}, { value: { classification: 'machine' }, delayMs: 400 });
    const t0 = timeline.now();
    const g = new VoicemailGate({ settings: hangup, timers: timeline, render, classifier: { model, modelName: 'gpt-4o-mini' } });
    let plan: VoicemailPlan | null = null;
    void g.plan.then((p) => (plan = p));
    g.speechStarted(t0 + 300);
    await timeline.advance(2000);
    g.transcript('Good afternoon, Sam speaking', true, t0 + 2000);
    g.speechStopped(t0 + 2100);
    await timeline.advance(900); // the pause ends the greeting at 2800: the model is asked
    expect(model.completeRequests).toHaveLength(1);
    expect(model.completeRequests[0]!.schema).toMatchObject({ properties: { classification: { enum: ['human', 'machine', 'unknown'] } } });
    expect(model.completeRequests[0]!.lastUser).toContain('Good afternoon, Sam speaking');
    expect(plan).toBeNull();
    await timeline.advance(400);
    expect(plan).toMatchObject({ kind: 'hang_up', result: { verdict: 'machine', source: 'llm' } });
    expect(model.completeRequests).toHaveLength(1);
  });

  it('with carrier AMD the carrier decides; a machine_end_beep verdict leaves the message at once', async () => {
    const { timeline, t0, g, plan } = gate(leave, { carrierAmd: true });
    // our own detector would call this short greeting human: it does not decide here
    g.speechStarted(t0 + 100);
    g.speechStopped(t0 + 600);
    await timeline.advance(2000);
    expect(plan()).toBeNull();
    g.carrier({ verdict: 'machine', source: 'carrier', reason: 'answered_by=machine_end_beep', greetingEnded: { beep: true } });
    await timeline.advance(1);
    expect(plan()).toMatchObject({ kind: 'leave_message', result: { source: 'carrier', reason: 'answered_by=machine_end_beep', decidedAtMs: t0 + 2000 } });
  });

  it('with carrier AMD, a machine_start verdict waits for our greeting end; no verdict in time falls back to ours', async () => {
    const a = gate(leave, { carrierAmd: true });
    a.g.speechStarted(a.t0 + 100);
    await a.timeline.advance(1500);
    a.g.carrier({ verdict: 'machine', source: 'carrier', reason: 'answered_by=machine_start' });
    a.g.speechStopped(a.t0 + 3000);
    await a.timeline.advance(3000); // 4500: 1500 ms after the greeting
    expect(a.plan()).toMatchObject({ kind: 'leave_message', result: { reason: 'answered_by=machine_start' } });

    const b = gate(hangup, { carrierAmd: true, carrierTimeoutMs: 6000 });
    b.g.speechStarted(b.t0 + 100);
    b.g.speechStopped(b.t0 + 600);
    await b.timeline.advance(5900);
    expect(b.plan()).toBeNull();
    await b.timeline.advance(200);
    expect(b.plan()).toMatchObject({ kind: 'converse', result: { verdict: 'human', source: 'heuristic' } });
  });

  it('no speech: unknown at 4 s → converse', async () => {
    const { timeline, plan } = gate(hangup);
    await timeline.advance(3900);
    expect(plan()).toBeNull();
    await timeline.advance(200);
    expect(plan()).toMatchObject({ kind: 'converse', result: { verdict: 'unknown', reason: 'no speech in 4000 ms' } });
  });

  it('close() stops the timer and leaves the plan unresolved', async () => {
    const { timeline, g, plan } = gate(hangup);
    g.close();
    await timeline.advance(10_000);
    expect(plan()).toBeNull();
    expect(timeline.pendingCount).toBe(0);
  });
});
