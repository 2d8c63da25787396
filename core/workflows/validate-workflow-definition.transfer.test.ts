import { describe, expect, it } from '@jest/globals';
import { validateWorkflowDefinition } from './validate-workflow-definition.js';
import { workflowNodeDataSchema } from './workflow-definition.schema.js';

const P = ['body', 'workflow_definition'];

function def(endData: Record<string, unknown>, agentData: Record<string, unknown> = {}) {
  return {
    nodes: [
      { id: 'start', type: 'startCall', data: { name: 'Start', prompt: 'Hi' } },
      { id: 'a', type: 'agentNode', data: { name: 'A', prompt: 'Ask', ...agentData } },
      { id: 'end', type: 'endCall', data: { name: 'Hand over', prompt: 'Say you transfer them', ...endData } },
    ],
    edges: [
      { id: 'e1', source: 'start', target: 'a', data: { label: 'go', condition: 'go' } },
      { id: 'e2', source: 'a', target: 'end', data: { label: 'human', condition: 'wants a human' } },
    ],
  };
}

describe('validateWorkflowDefinition: data.transfer_to on endCall nodes', () => {
  it.each([
    '+15551234567',
    '+1 (555) 123-4567',
    'sip:desk@pbx.example.com',
    'SIPS:desk@pbx.example.com:5061;transport=tls',
    'sip:10.0.0.5',
    '{{manager_phone}}',
    'sip:{{extension}}@pbx.example.com',
    '+1{{gathered_context.department_digits | 5550000}}',
  ])('accepts %s', (value) => {
    expect(validateWorkflowDefinition(def({ transfer_to: value }))).toEqual([]);
  });

  it.each(['5551234567', '+0123', 'tel:+15551234567', 'sip:', 'sip:desk@', 'sip:a b@host', 'sip:"x"@host', '', '   ', 'call Bob'])(
    'refuses %j at the field with workflow.transfer_to_invalid',
    (value) => {
      const issues = validateWorkflowDefinition(def({ transfer_to: value }));
      expect(issues).toEqual([
        { loc: [...P, 'nodes', 2, 'data', 'transfer_to'], msg: expect.stringContaining("node 'end': data.transfer_to"), type: 'workflow.transfer_to_invalid' },
      ]);
    },
  );

  it('refuses a non-string as a structural error only (string_type), like the schema', () => {
    expect(validateWorkflowDefinition(def({ transfer_to: 15551234567 }))).toEqual([
      { loc: [...P, 'nodes', 2, 'data', 'transfer_to'], msg: expect.stringContaining('must be a string'), type: 'string_type' },
    ]);
    expect(workflowNodeDataSchema.properties.transfer_to.type).toBe('string');
  });

  it('refuses transfer_to on a node that is not an endCall', () => {
    const issues = validateWorkflowDefinition(def({}, { transfer_to: '+15551234567' }));
    expect(issues).toEqual([
      { loc: [...P, 'nodes', 1, 'data', 'transfer_to'], msg: expect.stringContaining('only meaningful on an endCall node'), type: 'workflow.transfer_to_not_end_node' },
    ]);
  });
});
