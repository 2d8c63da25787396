import { describe, expect, it } from '@jest/globals';
import { aiServiceReferences, canTalk, validateWorkflowConfigurations } from './workflow-configurations.js';

const full = {
  llm: { service_id: 3, model: 'gpt-4o-mini', temperature: 0.7 },
  stt: { service_id: 4, model: 'nova-3', language: 'en' },
  tts: { service_id: 5, voice: 'alloy', model: 'tts-1' },
  max_call_duration_seconds: 600,
  user_idle_timeout_seconds: 10,
  interruption_min_speech_ms: 300,
  voicemail: { detect: true, action: 'leave_message', message: 'Please call us back.' },
};
const locs = (v: unknown) => validateWorkflowConfigurations(v).map((i) => i.loc.join('.'));

describe('validateWorkflowConfigurations (API.md 11)', () => {
  it('accepts every known key, an empty object and unknown keys anywhere', () => {
    expect(validateWorkflowConfigurations(full)).toEqual([]);
    expect(validateWorkflowConfigurations({})).toEqual([]);
    expect(validateWorkflowConfigurations({ ...full, ui: { color: 'red' }, llm: { ...full.llm, top_p: 0.9 } })).toEqual([]);
    expect(validateWorkflowConfigurations({ voicemail: { action: 'hangup', message: '' } })).toEqual([]);
  });

  it('puts each problem at its loc under body.workflow_configurations', () => {
    expect(validateWorkflowConfigurations([])).toEqual([{ loc: ['body', 'workflow_configurations'], msg: 'Input should be a valid object', type: 'dict_type' }]);
    expect(locs({ llm: 'gpt' })).toEqual(['body.workflow_configurations.llm']);
    expect(locs({ llm: {} })).toEqual(['body.workflow_configurations.llm.service_id', 'body.workflow_configurations.llm.model']);
    expect(locs({ llm: { service_id: 0, model: ' ', temperature: 2.5 } })).toEqual([
      'body.workflow_configurations.llm.service_id', 'body.workflow_configurations.llm.model', 'body.workflow_configurations.llm.temperature',
    ]);
    expect(locs({ stt: { service_id: '4' }, tts: { service_id: 1.5, voice: 7 } })).toEqual([
      'body.workflow_configurations.stt.service_id', 'body.workflow_configurations.tts.service_id', 'body.workflow_configurations.tts.voice',
    ]);
    expect(locs({ voicemail: { detect: 'yes', action: 'beep', message: 3 } })).toEqual([
      'body.workflow_configurations.voicemail.detect', 'body.workflow_configurations.voicemail.action', 'body.workflow_configurations.voicemail.message',
    ]);
  });

  it.each([
    ['max_call_duration_seconds', 10, 14400],
    ['user_idle_timeout_seconds', 3, 120],
    ['interruption_min_speech_ms', 0, 5000],
  ])('bounds %s to %d..%d (integers)', (key, min, max) => {
    expect(validateWorkflowConfigurations({ [key]: min })).toEqual([]);
    expect(validateWorkflowConfigurations({ [key]: max })).toEqual([]);
    expect(validateWorkflowConfigurations({ [key]: min - 1 })).toEqual([{ loc: ['body', 'workflow_configurations', key], msg: `Input should be greater than or equal to ${min}`, type: 'greater_than_equal' }]);
    expect(validateWorkflowConfigurations({ [key]: max + 1 })[0]!.type).toBe('less_than_equal');
    expect(validateWorkflowConfigurations({ [key]: min + 0.5 })[0]!.type).toBe('int_type');
    expect(validateWorkflowConfigurations({ [key]: null })[0]!.type).toBe('int_type');
  });

  it('bounds temperature to 0..2', () => {
    for (const t of [0, 1.3, 2]) expect(validateWorkflowConfigurations({ llm: { service_id: 1, model: 'm', temperature: t } })).toEqual([]);
    for (const t of [-0.1, 2.01, '1']) expect(locs({ llm: { service_id: 1, model: 'm', temperature: t } })).toEqual(['body.workflow_configurations.llm.temperature']);
  });

  it('uses the caller\'s loc prefix', () => {
    expect(validateWorkflowConfigurations({ llm: 1 }, ['x'])[0]!.loc).toEqual(['x', 'llm']);
  });
});

describe('service references', () => {
  it('lists the service of each block and says whether the agent can talk', () => {
    expect(aiServiceReferences(full)).toEqual([{ block: 'llm', serviceId: 3 }, { block: 'stt', serviceId: 4 }, { block: 'tts', serviceId: 5 }]);
    expect(canTalk(full)).toBe(true);
    const { tts: _t, ...noTts } = full;
    expect(canTalk(noTts)).toBe(false);
    expect(canTalk({})).toBe(false);
    expect(aiServiceReferences({ llm: 'x', extra: { service_id: 9 } })).toEqual([]);
  });
});
