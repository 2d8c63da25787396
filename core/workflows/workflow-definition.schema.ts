/**
 * JSON Schema of a `workflow_definition` for STRUCTURAL validation only: types, required fields, enums and
 * non-blank strings. The graph rules (one startCall, edge endpoints exist, unique ids and labels, ...) cannot
 * be said in JSON Schema; `validateWorkflowDefinition` checks them.
 *
 * Plain data with no `$schema`, `$id` or `$ref`, so it compiles unchanged with ajv 8 (`Ajv` or `Ajv2020`) and
 * can be embedded as is in an OpenAPI 3.1 document. Keys not named here are allowed everywhere (the API
 * ignores unknown fields); on node `data` they are stored and returned as sent.
 *
 * Keep in step with the plain-TypeScript structural check in validate-workflow-definition.ts.
 */

/** A string with at least one non-whitespace character. */
const nonBlankString = { type: 'string', minLength: 1, pattern: '\\S' } as const;

export const workflowNodeTypeSchema = {
  type: 'string',
  enum: ['startCall', 'agentNode', 'endCall', 'globalNode'],
  description:
    'startCall: where every call begins (exactly one). agentNode: a step of the conversation. ' +
    'endCall: where a call ends. globalNode: a prompt added to the nodes that ask for it (at most one, no edges).',
} as const;

export const extractionVariableSchema = {
  type: 'object',
  required: ['name', 'type', 'prompt'],
  properties: {
    name: { ...nonBlankString, description: 'Key of the gathered value in the run\'s gathered_context.' },
    type: { type: 'string', enum: ['string', 'number', 'boolean'] },
    prompt: { type: 'string', description: 'What to listen for.' },
  },
} as const;

export const workflowNodeDataSchema = {
  type: 'object',
  required: ['name', 'prompt'],
  properties: {
    name: { type: 'string' },
    prompt: { ...nonBlankString, description: 'Instructions for the model at this step.' },
    greeting: { type: 'string', description: 'What the agent says first (startCall).' },
    allow_interrupt: { type: 'boolean' },
    add_global_prompt: { type: 'boolean', description: 'Add the globalNode prompt to this node.' },
    extraction_enabled: { type: 'boolean' },
    extraction_variables: { type: 'array', items: extractionVariableSchema },
    disposition: { type: 'string', description: 'Disposition code of a call that ends here (endCall).' },
    transfer_to: {
      type: 'string',
      description:
        'endCall only: hand the caller over after the last words, to an E.164 number or a sip:/sips: URI; ' +
        '{{templates}} render with the call\'s context (docs/voice.md, Transfers).',
    },
  },
  additionalProperties: true,
} as const;

export const workflowNodeSchema = {
  type: 'object',
  required: ['id', 'type', 'data'],
  properties: {
    id: { ...nonBlankString, description: 'Unique among the nodes.' },
    type: workflowNodeTypeSchema,
    position: {
      type: 'object',
      required: ['x', 'y'],
      properties: { x: { type: 'number' }, y: { type: 'number' } },
      description: 'Editor placement; no meaning for calls.',
    },
    data: workflowNodeDataSchema,
  },
} as const;

export const workflowEdgeSchema = {
  type: 'object',
  required: ['id', 'source', 'target', 'data'],
  properties: {
    id: { ...nonBlankString, description: 'Unique among the edges.' },
    source: { ...nonBlankString, description: 'Id of the node the edge leaves.' },
    target: { ...nonBlankString, description: 'Id of the node the edge enters.' },
    data: {
      type: 'object',
      required: ['label', 'condition'],
      properties: {
        label: {
          ...nonBlankString,
          description:
            'Unique among the edges leaving one node after lower-casing and replacing non-alphanumerics with _.',
        },
        condition: { ...nonBlankString, description: 'When to take this edge.' },
      },
    },
  },
} as const;

export const workflowDefinitionSchema = {
  type: 'object',
  required: ['nodes', 'edges'],
  properties: {
    nodes: { type: 'array', items: workflowNodeSchema },
    edges: { type: 'array', items: workflowEdgeSchema },
  },
  description:
    'The agent graph. Rules beyond this schema (checked on create and update, 422): exactly one startCall and no ' +
    'edge into it; an endCall has no outgoing edge and at least one incoming; an agentNode has at least one incoming ' +
    'edge; at most one globalNode, with no edges; edge endpoints exist; node ids and edge ids are unique; labels of ' +
    'the edges leaving one node are unique after lower-casing and replacing non-alphanumerics with _. Cycles are allowed.',
} as const;
