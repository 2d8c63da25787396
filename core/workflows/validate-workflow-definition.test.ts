import { describe, expect, it } from '@jest/globals';
import { ValidationError, type ValidationIssue } from '../errors.js';
import { exampleWorkflowDefinition } from './example-definition.js';
import { EXTRACTION_VARIABLE_TYPES, WORKFLOW_NODE_TYPES, type WorkflowDefinition } from './workflow-definition.js';
import {
  extractionVariableSchema,
  workflowDefinitionSchema,
  workflowEdgeSchema,
  workflowNodeDataSchema,
  workflowNodeSchema,
} from './workflow-definition.schema.js';
import {
  assertValidWorkflowDefinition,
  declaredDispositionCodes,
  normalizeEdgeLabel,
  validateWorkflowDefinition,
} from './validate-workflow-definition.js';

const P = ['body', 'workflow_definition'];

function node(id: string, type: string, data: Record<string, unknown> = {}): Record<string, unknown> {
  return { id, type, data: { name: id, prompt: `Prompt of ${id}`, ...data } };
}

function edge(id: string, source: string, target: string, label = id): Record<string, unknown> {
  return { id, source, target, data: { label, condition: `take ${id}` } };
}

/** start → a → end: the smallest useful valid graph, to break in one place per test. */
function base(): { nodes: Record<string, unknown>[]; edges: Record<string, unknown>[] } {
  return {
    nodes: [node('start', 'startCall'), node('a', 'agentNode'), node('end', 'endCall')],
    edges: [edge('e1', 'start', 'a'), edge('e2', 'a', 'end')],
  };
}

function locs(issues: ValidationIssue[]): unknown[] {
  return issues.map((i) => i.loc);
}

function example(): WorkflowDefinition {
  return structuredClone(exampleWorkflowDefinition);
}

describe('validateWorkflowDefinition: valid graphs', () => {
  it('accepts the documented example', () => {
    expect(validateWorkflowDefinition(example())).toEqual([]);
  });

  it('accepts the minimal start → agent → end graph', () => {
    expect(validateWorkflowDefinition(base())).toEqual([]);
  });

  it('accepts a start node alone and a start wired straight to an end', () => {
    expect(validateWorkflowDefinition({ nodes: [node('s', 'startCall')], edges: [] })).toEqual([]);
    expect(
      validateWorkflowDefinition({ nodes: [node('s', 'startCall'), node('x', 'endCall')], edges: [edge('e', 's', 'x')] }),
    ).toEqual([]);
  });

  it('accepts cycles between agent nodes, including a self-loop', () => {
    const def = base();
    def.nodes.push(node('b', 'agentNode'));
    def.edges.push(edge('e3', 'a', 'b'), edge('e4', 'b', 'a'), edge('e5', 'b', 'b'), edge('e6', 'b', 'end'));
    expect(validateWorkflowDefinition(def)).toEqual([]);
  });

  it('counts a self-loop as the incoming edge of an agent node', () => {
    const def = base();
    def.nodes.push(node('lonely', 'agentNode'));
    def.edges.push(edge('loop', 'lonely', 'lonely'));
    expect(validateWorkflowDefinition(def)).toEqual([]);
  });

  it('accepts every optional field, unknown extra keys, and the same label on edges of different sources', () => {
    const def = base();
    def.nodes[0] = {
      ...node('start', 'startCall', {
        greeting: 'Hello',
        allow_interrupt: false,
        add_global_prompt: true,
        extraction_enabled: true,
        extraction_variables: [
          { name: 'age', type: 'number', prompt: 'their age' },
          { name: 'ok', type: 'boolean', prompt: '' },
        ],
        disposition: 'n/a',
        editor_color: '#ff0000',
      }),
      position: { x: -10.5, y: 3 },
      selected: true,
    };
    def.edges[0] = { ...edge('e1', 'start', 'a', 'Next'), animated: true };
    def.edges[1] = edge('e2', 'a', 'end', 'Next');
    expect(validateWorkflowDefinition({ ...def, viewport: { zoom: 1 } })).toEqual([]);
  });

  it('accepts edges between the same two nodes when their labels differ', () => {
    const def = base();
    def.edges.push(edge('e3', 'a', 'end', 'Other reason'));
    expect(validateWorkflowDefinition(def)).toEqual([]);
  });

  it('accepts a globalNode without edges beside the flow', () => {
    const def = base();
    def.nodes.push(node('g', 'globalNode'));
    expect(validateWorkflowDefinition(def)).toEqual([]);
  });
});

describe('validateWorkflowDefinition: structure', () => {
  it.each([
    [null, 'null'],
    [[], 'an array'],
    ['nodes', 'the string "nodes"'],
    [42, 'number 42'],
    [undefined, 'nothing'],
  ])('refuses a definition that is not an object (%p)', (value, described) => {
    const issues = validateWorkflowDefinition(value);
    expect(issues).toEqual([
      { loc: P, msg: `workflow_definition must be an object with nodes and edges, got ${described}`, type: 'dict_type' },
    ]);
  });

  it('requires nodes and edges to be arrays', () => {
    expect(validateWorkflowDefinition({})).toEqual([
      { loc: [...P, 'nodes'], msg: 'workflow_definition.nodes is required (an array, possibly empty)', type: 'missing' },
      { loc: [...P, 'edges'], msg: 'workflow_definition.edges is required (an array, possibly empty)', type: 'missing' },
    ]);
    expect(validateWorkflowDefinition({ nodes: {}, edges: 'x' }).map((i) => [i.loc, i.type])).toEqual([
      [[...P, 'nodes'], 'list_type'],
      [[...P, 'edges'], 'list_type'],
    ]);
  });

  it('uses the given loc prefix', () => {
    const issues = validateWorkflowDefinition({ nodes: [], edges: null }, ['body', 'definition']);
    expect(issues.map((i) => i.loc)).toEqual([
      ['body', 'definition', 'edges'],
      // edges is unusable, so no graph rule runs (no "no startCall" issue on top).
    ]);
  });

  it('refuses a node that is not an object', () => {
    const def = base();
    (def.nodes as unknown[])[1] = 'a';
    const issues = validateWorkflowDefinition(def);
    expect(issues[0]).toEqual({
      loc: [...P, 'nodes', 1],
      msg: 'node at index 1 must be an object with id, type and data, got the string "a"',
      type: 'dict_type',
    });
  });

  it('names the node and the field when data.prompt is missing', () => {
    const def = base();
    def.nodes.push(node('n3', 'agentNode'));
    def.edges.push(edge('e3', 'a', 'n3'));
    delete (def.nodes[3].data as Record<string, unknown>).prompt;
    expect(validateWorkflowDefinition(def)).toEqual([
      { loc: [...P, 'nodes', 3, 'data', 'prompt'], msg: "node 'n3': data.prompt is required", type: 'missing' },
    ]);
  });

  it('refuses an empty or whitespace-only prompt', () => {
    const def = base();
    (def.nodes[1].data as Record<string, unknown>).prompt = '';
    (def.nodes[2].data as Record<string, unknown>).prompt = ' \n\t ';
    expect(validateWorkflowDefinition(def)).toEqual([
      { loc: [...P, 'nodes', 1, 'data', 'prompt'], msg: "node 'a': data.prompt must not be empty", type: 'string_too_short' },
      {
        loc: [...P, 'nodes', 2, 'data', 'prompt'],
        msg: "node 'end': data.prompt must not be blank (it holds only whitespace)",
        type: 'string_pattern_mismatch',
      },
    ]);
  });

  it('requires data.name to be a string but allows it to be empty', () => {
    const def = base();
    (def.nodes[1].data as Record<string, unknown>).name = '';
    expect(validateWorkflowDefinition(def)).toEqual([]);
    (def.nodes[1].data as Record<string, unknown>).name = 7;
    expect(validateWorkflowDefinition(def)).toEqual([
      { loc: [...P, 'nodes', 1, 'data', 'name'], msg: "node 'a': data.name must be a string, got number 7", type: 'string_type' },
    ]);
    delete (def.nodes[1].data as Record<string, unknown>).name;
    expect(locs(validateWorkflowDefinition(def))).toEqual([[...P, 'nodes', 1, 'data', 'name']]);
  });

  it('refuses a node without data, or with data that is not an object', () => {
    const def = base();
    delete def.nodes[1].data;
    def.nodes[2].data = [];
    expect(validateWorkflowDefinition(def)).toEqual([
      { loc: [...P, 'nodes', 1, 'data'], msg: "node 'a': data is required (an object)", type: 'missing' },
      { loc: [...P, 'nodes', 2, 'data'], msg: "node 'end': data must be an object, got an array", type: 'dict_type' },
    ]);
  });

  it('refuses a missing, empty or non-string node id and names the node by index', () => {
    const def = base();
    delete def.nodes[1].id;
    def.nodes[2].id = '';
    expect(validateWorkflowDefinition(def)).toEqual([
      { loc: [...P, 'nodes', 1, 'id'], msg: 'node at index 1: id is required', type: 'missing' },
      { loc: [...P, 'nodes', 2, 'id'], msg: 'node at index 2: id must not be empty', type: 'string_too_short' },
      // The edges now point at ids no node carries.
      { loc: [...P, 'edges', 0, 'target'], msg: "edge 'e1' targets node 'a', which does not exist", type: 'workflow.edge_target_missing' },
      { loc: [...P, 'edges', 1, 'source'], msg: "edge 'e2' leaves node 'a', which does not exist", type: 'workflow.edge_source_missing' },
      { loc: [...P, 'edges', 1, 'target'], msg: "edge 'e2' targets node 'end', which does not exist", type: 'workflow.edge_target_missing' },
    ]);
  });

  it('refuses an unknown node type once, without echoing graph rules for that node', () => {
    const def = base();
    def.nodes.push(node('odd', 'fooNode'));
    expect(validateWorkflowDefinition(def)).toEqual([
      {
        loc: [...P, 'nodes', 3, 'type'],
        msg: "node 'odd': type 'fooNode' is unknown; use one of 'startCall', 'agentNode', 'endCall', 'globalNode'",
        type: 'literal_error',
      },
    ]);
  });

  it('refuses a missing or non-string node type', () => {
    const def = base();
    delete def.nodes[1].type;
    def.nodes[2].type = 3;
    const issues = validateWorkflowDefinition(def);
    expect(issues.map((i) => [i.loc, i.type])).toEqual([
      [[...P, 'nodes', 1, 'type'], 'missing'],
      [[...P, 'nodes', 2, 'type'], 'string_type'],
    ]);
    expect(issues[0].msg).toContain("'startCall', 'agentNode', 'endCall', 'globalNode'");
  });

  it('checks position only when present: an object of two finite numbers', () => {
    const def = base();
    def.nodes[0].position = { x: '1', y: 2 };
    def.nodes[1].position = { x: 1 };
    def.nodes[2].position = [1, 2];
    expect(validateWorkflowDefinition(def)).toEqual([
      { loc: [...P, 'nodes', 0, 'position', 'x'], msg: "node 'start': position.x must be a number, got the string \"1\"", type: 'float_type' },
      { loc: [...P, 'nodes', 1, 'position', 'y'], msg: "node 'a': position.y is required", type: 'missing' },
      { loc: [...P, 'nodes', 2, 'position'], msg: "node 'end': position must be an object, got an array", type: 'dict_type' },
    ]);
    def.nodes[0].position = { x: Number.NaN, y: Number.POSITIVE_INFINITY };
    delete def.nodes[1].position;
    delete def.nodes[2].position;
    expect(validateWorkflowDefinition(def).map((i) => [i.loc, i.type])).toEqual([
      [[...P, 'nodes', 0, 'position', 'x'], 'finite_number'],
      [[...P, 'nodes', 0, 'position', 'y'], 'finite_number'],
    ]);
  });

  it('checks the types of the optional data fields', () => {
    const def = base();
    Object.assign(def.nodes[0].data as object, {
      greeting: 5,
      allow_interrupt: 'yes',
      add_global_prompt: 1,
      extraction_enabled: null,
      disposition: false,
    });
    expect(validateWorkflowDefinition(def)).toEqual([
      { loc: [...P, 'nodes', 0, 'data', 'greeting'], msg: "node 'start': data.greeting must be a string, got number 5", type: 'string_type' },
      {
        loc: [...P, 'nodes', 0, 'data', 'allow_interrupt'],
        msg: "node 'start': data.allow_interrupt must be true or false, got the string \"yes\"",
        type: 'bool_type',
      },
      {
        loc: [...P, 'nodes', 0, 'data', 'add_global_prompt'],
        msg: "node 'start': data.add_global_prompt must be true or false, got number 1",
        type: 'bool_type',
      },
      {
        loc: [...P, 'nodes', 0, 'data', 'extraction_enabled'],
        msg: "node 'start': data.extraction_enabled must be true or false, got null",
        type: 'bool_type',
      },
      {
        loc: [...P, 'nodes', 0, 'data', 'disposition'],
        msg: "node 'start': data.disposition must be a string, got boolean false",
        type: 'string_type',
      },
    ]);
  });

  it('checks extraction variables item by item', () => {
    const def = base();
    (def.nodes[1].data as Record<string, unknown>).extraction_variables = [
      { name: 'ok', type: 'string', prompt: 'p' },
      { name: ' ', type: 'date', prompt: 'p' },
      'age',
      { type: 'number' },
    ];
    expect(validateWorkflowDefinition(def)).toEqual([
      {
        loc: [...P, 'nodes', 1, 'data', 'extraction_variables', 1, 'name'],
        msg: "node 'a': data.extraction_variables[1].name must not be blank (it holds only whitespace)",
        type: 'string_pattern_mismatch',
      },
      {
        loc: [...P, 'nodes', 1, 'data', 'extraction_variables', 1, 'type'],
        msg: "node 'a': data.extraction_variables[1].type 'date' is unknown; use one of 'string', 'number', 'boolean'",
        type: 'literal_error',
      },
      {
        loc: [...P, 'nodes', 1, 'data', 'extraction_variables', 2],
        msg: "node 'a': data.extraction_variables[2] must be an object with name, type and prompt, got the string \"age\"",
        type: 'dict_type',
      },
      {
        loc: [...P, 'nodes', 1, 'data', 'extraction_variables', 3, 'name'],
        msg: "node 'a': data.extraction_variables[3].name is required",
        type: 'missing',
      },
      {
        loc: [...P, 'nodes', 1, 'data', 'extraction_variables', 3, 'prompt'],
        msg: "node 'a': data.extraction_variables[3].prompt is required",
        type: 'missing',
      },
    ]);
    (def.nodes[1].data as Record<string, unknown>).extraction_variables = { name: 'x' };
    expect(validateWorkflowDefinition(def).map((i) => [i.loc, i.type])).toEqual([
      [[...P, 'nodes', 1, 'data', 'extraction_variables'], 'list_type'],
    ]);
  });

  it('checks edge fields and names the edge', () => {
    const def = base();
    def.edges[0] = { id: 'e1', source: 7, target: ' ', data: { label: '', condition: '  ' } };
    def.edges[1] = { id: 'e2', source: 'a', target: 'end' };
    (def.edges as unknown[]).push(null);
    expect(validateWorkflowDefinition(def)).toEqual([
      {
        loc: [...P, 'edges', 0, 'source'],
        msg: "edge 'e1': source (the id of the node it leaves) must be a string, got number 7",
        type: 'string_type',
      },
      {
        loc: [...P, 'edges', 0, 'target'],
        msg: "edge 'e1': target (the id of the node it enters) must not be blank (it holds only whitespace)",
        type: 'string_pattern_mismatch',
      },
      { loc: [...P, 'edges', 0, 'data', 'label'], msg: "edge 'e1': data.label must not be empty", type: 'string_too_short' },
      {
        loc: [...P, 'edges', 0, 'data', 'condition'],
        msg: "edge 'e1': data.condition must not be blank (it holds only whitespace)",
        type: 'string_pattern_mismatch',
      },
      { loc: [...P, 'edges', 1, 'data'], msg: "edge 'e2': data is required (an object)", type: 'missing' },
      {
        loc: [...P, 'edges', 2],
        msg: 'edge at index 2 must be an object with id, source, target and data, got null',
        type: 'dict_type',
      },
      // Node 'a' lost its only incoming edge (e1's target is unusable).
      {
        loc: [...P, 'nodes', 1],
        msg: "agentNode 'a' has no incoming edge, so no call can reach it; connect a node to it or remove it",
        type: 'workflow.agent_node_no_incoming_edge',
      },
    ]);
  });

  it('requires edge id, source, target and label', () => {
    const def = base();
    def.edges[1] = { data: { condition: 'c' } };
    expect(validateWorkflowDefinition(def).map((i) => [i.loc, i.type, i.msg])).toEqual([
      [[...P, 'edges', 1, 'id'], 'missing', 'edge at index 1: id is required'],
      [[...P, 'edges', 1, 'source'], 'missing', 'edge at index 1: source (the id of the node it leaves) is required'],
      [[...P, 'edges', 1, 'target'], 'missing', 'edge at index 1: target (the id of the node it enters) is required'],
      [[...P, 'edges', 1, 'data', 'label'], 'missing', 'edge at index 1: data.label is required'],
      [
        [...P, 'nodes', 2],
        'workflow.end_node_no_incoming_edge',
        "endCall node 'end' has no incoming edge, so no call can end there; connect a node to it or remove it",
      ],
    ]);
  });
});

describe('validateWorkflowDefinition: graph rules', () => {
  it('requires a startCall node, saying so on nodes', () => {
    expect(validateWorkflowDefinition({ nodes: [], edges: [] })).toEqual([
      {
        loc: [...P, 'nodes'],
        msg: 'the workflow has no nodes; it needs exactly one startCall node, where every call begins',
        type: 'workflow.start_node_count',
      },
    ]);
    const def = base();
    def.nodes[0].type = 'agentNode';
    def.edges.push(edge('e0', 'a', 'start'));
    expect(validateWorkflowDefinition(def)).toEqual([
      {
        loc: [...P, 'nodes'],
        msg: 'the workflow has no startCall node; it needs exactly one, where every call begins',
        type: 'workflow.start_node_count',
      },
    ]);
  });

  it('refuses a second startCall node, on that node', () => {
    const def = base();
    def.nodes.push(node('start2', 'startCall'));
    def.edges.push(edge('e3', 'start2', 'a'));
    expect(validateWorkflowDefinition(def)).toEqual([
      {
        loc: [...P, 'nodes', 3, 'type'],
        msg: "node 'start2' is a second startCall node (the first is node 'start'); a workflow has exactly one",
        type: 'workflow.start_node_count',
      },
    ]);
  });

  it('refuses an edge into the startCall node, on its target', () => {
    const def = base();
    def.edges.push(edge('back', 'a', 'start'));
    expect(validateWorkflowDefinition(def)).toEqual([
      {
        loc: [...P, 'edges', 2, 'target'],
        msg: "edge 'back' enters the startCall node 'start'; no edge may lead into the start of a call",
        type: 'workflow.start_node_incoming_edge',
      },
    ]);
  });

  it('refuses an edge out of an endCall node, on its source', () => {
    const def = base();
    def.edges.push(edge('after', 'end', 'a'));
    expect(validateWorkflowDefinition(def)).toEqual([
      {
        loc: [...P, 'edges', 2, 'source'],
        msg: "edge 'after' leaves the endCall node 'end'; a call ends there, so it can have no outgoing edge",
        type: 'workflow.end_node_outgoing_edge',
      },
    ]);
  });

  it('refuses an endCall node nothing leads to, on the node', () => {
    const def = base();
    def.nodes.push(node('end2', 'endCall'));
    expect(validateWorkflowDefinition(def)).toEqual([
      {
        loc: [...P, 'nodes', 3],
        msg: "endCall node 'end2' has no incoming edge, so no call can end there; connect a node to it or remove it",
        type: 'workflow.end_node_no_incoming_edge',
      },
    ]);
  });

  it('refuses an agentNode nothing leads to, on the node', () => {
    const def = base();
    def.nodes.push(node('orphan', 'agentNode'));
    def.edges.push(edge('e3', 'orphan', 'end'));
    expect(validateWorkflowDefinition(def)).toEqual([
      {
        loc: [...P, 'nodes', 3],
        msg: "agentNode 'orphan' has no incoming edge, so no call can reach it; connect a node to it or remove it",
        type: 'workflow.agent_node_no_incoming_edge',
      },
    ]);
  });

  it('refuses a second globalNode, on that node', () => {
    const def = base();
    def.nodes.push(node('g1', 'globalNode'), node('g2', 'globalNode'), node('g3', 'globalNode'));
    expect(validateWorkflowDefinition(def)).toEqual([
      {
        loc: [...P, 'nodes', 4, 'type'],
        msg: "node 'g2' is a second globalNode (the first is node 'g1'); a workflow has at most one",
        type: 'workflow.global_node_count',
      },
      {
        loc: [...P, 'nodes', 5, 'type'],
        msg: "node 'g3' is a second globalNode (the first is node 'g1'); a workflow has at most one",
        type: 'workflow.global_node_count',
      },
    ]);
  });

  it('refuses edges out of or into the globalNode', () => {
    const def = base();
    def.nodes.push(node('g', 'globalNode'));
    def.edges.push(edge('from_g', 'g', 'a'), edge('to_g', 'a', 'g'));
    expect(validateWorkflowDefinition(def)).toEqual([
      {
        loc: [...P, 'edges', 2, 'source'],
        msg: "edge 'from_g' leaves the globalNode 'g'; the globalNode takes no edges",
        type: 'workflow.global_node_edge',
      },
      {
        loc: [...P, 'edges', 3, 'target'],
        msg: "edge 'to_g' enters the globalNode 'g'; the globalNode takes no edges",
        type: 'workflow.global_node_edge',
      },
    ]);
  });

  it('refuses edges whose endpoints do not exist, naming both ids', () => {
    const def = base();
    def.edges.push(edge('e3', 'a', 'n9'), edge('e4', 'ghost', 'end'));
    expect(validateWorkflowDefinition(def)).toEqual([
      {
        loc: [...P, 'edges', 2, 'target'],
        msg: "edge 'e3' targets node 'n9', which does not exist",
        type: 'workflow.edge_target_missing',
      },
      {
        loc: [...P, 'edges', 3, 'source'],
        msg: "edge 'e4' leaves node 'ghost', which does not exist",
        type: 'workflow.edge_source_missing',
      },
    ]);
  });

  it('refuses duplicate node ids and duplicate edge ids, on the later ones', () => {
    const def = base();
    def.nodes.push(node('a', 'agentNode'));
    def.edges.push(edge('e1', 'a', 'end', 'another'));
    expect(validateWorkflowDefinition(def)).toEqual([
      {
        loc: [...P, 'nodes', 3, 'id'],
        msg: "node id 'a' is used twice (nodes 1 and 3); node ids must be unique",
        type: 'workflow.node_id_duplicate',
      },
      {
        loc: [...P, 'edges', 2, 'id'],
        msg: "edge id 'e1' is used twice (edges 0 and 2); edge ids must be unique",
        type: 'workflow.edge_id_duplicate',
      },
    ]);
  });

  it('allows a node and an edge to share an id (separate namespaces)', () => {
    const def = base();
    def.edges[0].id = 'a';
    expect(validateWorkflowDefinition(def)).toEqual([]);
  });

  it('refuses labels of one node that collide after normalisation ("Yes!" vs "yes?")', () => {
    const def = base();
    def.nodes.push(node('b', 'agentNode'));
    def.edges = [
      edge('e1', 'start', 'a', 'Yes!'),
      edge('e2', 'start', 'b', 'yes?'),
      edge('e3', 'a', 'end', 'Yes!'),
      edge('e4', 'b', 'end', 'yes'),
    ];
    expect(validateWorkflowDefinition(def)).toEqual([
      {
        loc: [...P, 'edges', 1, 'data', 'label'],
        msg:
          "edge 'e2' label 'yes?' collides with edge 'e1' label 'Yes!' (both read 'yes_'); " +
          "the edges leaving node 'start' need distinct labels",
        type: 'workflow.edge_label_duplicate',
      },
    ]);
  });

  it('refuses exactly equal labels and space/punctuation variants on one source, reporting each later edge', () => {
    const def = base();
    def.nodes.push(node('b', 'agentNode'), node('c', 'agentNode'));
    def.edges.push(
      edge('e3', 'a', 'b', 'Call back later'),
      edge('e4', 'a', 'c', 'call-back-later'),
      edge('e5', 'a', 'b', 'CALL_BACK_LATER'),
      edge('e6', 'b', 'end', 'done'),
      edge('e7', 'c', 'end', 'done'),
    );
    expect(validateWorkflowDefinition(def).map((i) => [i.loc, i.type])).toEqual([
      [[...P, 'edges', 3, 'data', 'label'], 'workflow.edge_label_duplicate'],
      [[...P, 'edges', 4, 'data', 'label'], 'workflow.edge_label_duplicate'],
    ]);
  });

  it('reports every broken rule at once, structure first', () => {
    const issues = validateWorkflowDefinition({
      nodes: [node('s', 'startCall'), node('s', 'startCall', { prompt: '' }), node('x', 'endCall')],
      edges: [edge('e', 'x', 's')],
    });
    expect(issues.map((i) => i.type)).toEqual([
      'string_too_short',
      'workflow.node_id_duplicate',
      'workflow.start_node_count',
      'workflow.start_node_incoming_edge',
      'workflow.end_node_outgoing_edge',
      'workflow.end_node_no_incoming_edge',
    ]);
  });

  it('retargeting one edge of the example to a missing node reports the edge and the endCall it stranded', () => {
    const def = example();
    def.edges[5].target = 'end_done';
    expect(locs(validateWorkflowDefinition(def))).toEqual([
      [...P, 'edges', 5, 'target'],
      [...P, 'nodes', 4], // end_rescheduled lost its only incoming edge
    ]);
  });
});

describe('normalizeEdgeLabel', () => {
  it.each([
    ['Yes!', 'yes_'],
    ['yes?', 'yes_'],
    ['Call Back Later', 'call_back_later'],
    ['already_snake_9', 'already_snake_9'],
    ['  pad ', '__pad_'],
    ['Ünïcode', '_n_code'],
    ['👍 ok', '__ok'],
  ])('%p → %p', (label, normalized) => {
    expect(normalizeEdgeLabel(label)).toBe(normalized);
  });
});

describe('assertValidWorkflowDefinition', () => {
  it('returns for a valid definition', () => {
    const def: unknown = example();
    assertValidWorkflowDefinition(def);
    expect(def.nodes).toHaveLength(7);
  });

  it('throws a ValidationError carrying every issue, with the given loc prefix', () => {
    const def = base();
    def.edges.push(edge('e3', 'a', 'n9'));
    let caught: unknown;
    try {
      assertValidWorkflowDefinition(def, ['body']);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ValidationError);
    const error = caught as ValidationError;
    expect(error.code).toBe('validation_error');
    expect(error.issues).toEqual([
      { loc: ['body', 'edges', 2, 'target'], msg: "edge 'e3' targets node 'n9', which does not exist", type: 'workflow.edge_target_missing' },
    ]);
    expect(error.message).toContain('body.edges.2.target');
  });
});

describe('declaredDispositionCodes', () => {
  it('lists the example endCall dispositions in node order', () => {
    expect(declaredDispositionCodes(example())).toEqual(['appointment_confirmed', 'appointment_rescheduled', 'wrong_number']);
  });

  it('keeps the first of duplicates and skips blank codes, missing codes and non-endCall nodes', () => {
    const def = base() as unknown as WorkflowDefinition;
    def.nodes[0].data.disposition = 'from_start';
    def.nodes[1].data.disposition = 'from_agent';
    def.nodes[2].data.disposition = 'done';
    def.nodes.push(
      { id: 'x1', type: 'endCall', data: { name: '', prompt: 'p', disposition: 'busy' } },
      { id: 'x2', type: 'endCall', data: { name: '', prompt: 'p', disposition: 'done' } },
      { id: 'x3', type: 'endCall', data: { name: '', prompt: 'p', disposition: '  ' } },
      { id: 'x4', type: 'endCall', data: { name: '', prompt: 'p' } },
    );
    expect(declaredDispositionCodes(def)).toEqual(['done', 'busy']);
  });
});

describe('example definition', () => {
  it('has the documented shape: startCall → agentNode ⇄ agentNode → endCall, and one globalNode', () => {
    const def = example();
    const typeOf = (id: string) => def.nodes.find((n) => n.id === id)?.type;
    expect(def.nodes.filter((n) => n.type === 'startCall')).toHaveLength(1);
    expect(def.nodes.filter((n) => n.type === 'globalNode')).toHaveLength(1);
    const agentToAgent = def.edges.filter((e) => typeOf(e.source) === 'agentNode' && typeOf(e.target) === 'agentNode');
    // Both directions between the two agent nodes: a cycle.
    expect(agentToAgent.map((e) => `${e.source}>${e.target}`).sort()).toEqual(['confirm>reschedule', 'reschedule>confirm']);
    expect(def.edges.some((e) => typeOf(e.source) === 'startCall' && typeOf(e.target) === 'agentNode')).toBe(true);
    expect(def.edges.some((e) => typeOf(e.source) === 'agentNode' && typeOf(e.target) === 'endCall')).toBe(true);
  });

  it('is plain JSON (survives a JSON round trip unchanged)', () => {
    expect(JSON.parse(JSON.stringify(exampleWorkflowDefinition))).toEqual(exampleWorkflowDefinition);
  });
});

describe('workflowDefinitionSchema stays in step with the types and the TypeScript check', () => {
  it('uses the same enums as the domain types', () => {
    expect(workflowNodeSchema.properties.type.enum).toEqual([...WORKFLOW_NODE_TYPES]);
    expect(extractionVariableSchema.properties.type.enum).toEqual([...EXTRACTION_VARIABLE_TYPES]);
  });

  it('requires what the validator requires', () => {
    expect(workflowDefinitionSchema.required).toEqual(['nodes', 'edges']);
    expect(workflowNodeSchema.required).toEqual(['id', 'type', 'data']);
    expect(workflowNodeDataSchema.required).toEqual(['name', 'prompt']);
    expect(workflowEdgeSchema.required).toEqual(['id', 'source', 'target', 'data']);
    expect(workflowEdgeSchema.properties.data.required).toEqual(['label', 'condition']);
    expect(extractionVariableSchema.required).toEqual(['name', 'type', 'prompt']);
  });

  it('marks the non-blank strings with minLength 1 and a \\S pattern that refuses whitespace', () => {
    const nonBlank = [
      workflowNodeSchema.properties.id,
      workflowNodeDataSchema.properties.prompt,
      workflowEdgeSchema.properties.id,
      workflowEdgeSchema.properties.source,
      workflowEdgeSchema.properties.target,
      workflowEdgeSchema.properties.data.properties.label,
      workflowEdgeSchema.properties.data.properties.condition,
      extractionVariableSchema.properties.name,
    ];
    for (const s of nonBlank) {
      expect(s).toMatchObject({ type: 'string', minLength: 1, pattern: '\\S' });
      const re = new RegExp(s.pattern, 'u');
      expect(re.test(' \t\n')).toBe(false);
      expect(re.test('  x ')).toBe(true);
    }
    expect(workflowNodeDataSchema.additionalProperties).toBe(true);
  });

  it('is self-contained JSON: no $ref, $id or $schema, so it embeds in OpenAPI 3.1 unchanged', () => {
    const text = JSON.stringify(workflowDefinitionSchema);
    expect(text).not.toMatch(/"\$(ref|id|schema|defs)"/u);
    expect(JSON.parse(text)).toEqual(workflowDefinitionSchema);
  });
});
