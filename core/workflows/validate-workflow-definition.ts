/**
 * Validation of an untrusted `workflow_definition` (API.md section 7), in plain TypeScript so core needs no
 * schema library. Two passes over the value:
 *
 * 1. Structure: the same rules as `workflowDefinitionSchema` (types, required fields, enums, non-blank strings).
 * 2. Graph rules, run whenever `nodes` and `edges` are arrays. They look only at the parts that are well-formed
 *    enough to judge (a node without a valid `type` counts for id uniqueness and edge endpoints but for no
 *    type rule), so one mistake is reported once rather than echoed by every rule.
 *
 * Every issue is FastAPI-shaped: `loc` is `locPrefix` followed by the path to the offending node, edge or field
 * (`['body','workflow_definition','edges',3,'target']`), `msg` names the ids involved, and `type` is stable:
 *
 * | type | meaning |
 * |---|---|
 * | `missing` | a required field is absent |
 * | `dict_type` / `list_type` / `string_type` / `bool_type` / `float_type` | wrong JSON type |
 * | `finite_number` | a position coordinate is NaN or infinite |
 * | `string_too_short` / `string_pattern_mismatch` | a non-blank string is empty / only whitespace |
 * | `literal_error` | a value outside its enum (an unknown node type, an unknown extraction variable type) |
 * | `workflow.node_id_duplicate` / `workflow.edge_id_duplicate` | an id used twice (reported on the later ones) |
 * | `workflow.start_node_count` | no startCall node, or more than one (reported on each extra one) |
 * | `workflow.start_node_incoming_edge` | an edge enters the startCall node |
 * | `workflow.end_node_outgoing_edge` | an edge leaves an endCall node |
 * | `workflow.end_node_no_incoming_edge` / `workflow.agent_node_no_incoming_edge` | nothing leads to the node |
 * | `workflow.global_node_count` | more than one globalNode (reported on each extra one) |
 * | `workflow.global_node_edge` | an edge leaves or enters the globalNode |
 * | `workflow.edge_source_missing` / `workflow.edge_target_missing` | an edge endpoint names no node |
 * | `workflow.edge_label_duplicate` | two edges leaving one node have labels equal after `normalizeEdgeLabel` |
 * | `workflow.transfer_to_not_end_node` | `data.transfer_to` on a node other than an endCall (only an ending hands a call over) |
 * | `workflow.transfer_to_invalid` | `data.transfer_to` without a `{{...}}` template is neither E.164 nor a `sip:`/`sips:` URI |
 *
 * Cycles are valid. Rules not listed here (reachability, an endCall being reachable) are deliberately absent.
 */
import { ValidationError, type ValidationIssue } from '../errors.js';
import {
  EXTRACTION_VARIABLE_TYPES,
  WORKFLOW_NODE_TYPES,
  isWorkflowNodeType,
  type WorkflowDefinition,
  type WorkflowNodeType,
} from './workflow-definition.js';
import { Graph, normalizeEdgeLabel, type GraphEdgeShape, type GraphNodeShape } from './workflow-graph.js';
import { isTemplatedTransferTarget, parseTransferTarget } from '../calls/transfer-target.js';

type Loc = (string | number)[];

export const DEFAULT_WORKFLOW_DEFINITION_LOC: readonly (string | number)[] = ['body', 'workflow_definition'];

export { normalizeEdgeLabel } from './workflow-graph.js';

/**
 * Every structural and graph problem of `def`, in a stable order (structure in document order, then the graph
 * rules); an empty array when it is valid. Never throws.
 */
export function validateWorkflowDefinition(
  def: unknown,
  locPrefix: (string | number)[] = [...DEFAULT_WORKFLOW_DEFINITION_LOC],
): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const report = (path: Loc, msg: string, type: string): void => {
    issues.push({ loc: [...locPrefix, ...path], msg, type });
  };

  if (!isPlainObject(def)) {
    report([], `workflow_definition must be an object with nodes and edges, got ${describe(def)}`, 'dict_type');
    return issues;
  }
  const nodes = checkArrayField(def, 'nodes', report);
  const edges = checkArrayField(def, 'edges', report);
  nodes?.forEach((node, i) => checkNode(node, i, report));
  edges?.forEach((edge, i) => checkEdge(edge, i, report));
  if (nodes && edges) checkGraph(nodes, edges, report);
  nodes?.forEach((node, i) => checkTransferTo(node, i, report));
  return issues;
}

/**
 * Throws `ValidationError` with every issue when `def` is not a valid workflow definition; afterwards `def` is
 * typed as `WorkflowDefinition`.
 */
export function assertValidWorkflowDefinition(
  def: unknown,
  locPrefix: (string | number)[] = [...DEFAULT_WORKFLOW_DEFINITION_LOC],
): asserts def is WorkflowDefinition {
  const issues = validateWorkflowDefinition(def, locPrefix);
  if (issues.length > 0) throw new ValidationError(issues);
}

/**
 * The disposition codes the definition declares: the distinct non-blank `data.disposition` values of its
 * endCall nodes, in node order. Dispositions on other node types are ignored. Never throws.
 */
export function declaredDispositionCodes(def: WorkflowDefinition): string[] {
  const codes: string[] = [];
  for (const node of def.nodes) {
    if (node.type !== 'endCall') continue;
    const code = node.data?.disposition;
    if (typeof code === 'string' && /\S/u.test(code) && !codes.includes(code)) codes.push(code);
  }
  return codes;
}

// ---------------------------------------------------------------------------------------------------------
// Structure

type Report = (path: Loc, msg: string, type: string) => void;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value)}`;
  if (typeof value === 'number' || typeof value === 'boolean') return `${typeof value} ${String(value)}`;
  return typeof value === 'object' ? 'an object' : typeof value;
}

function isNonBlankString(value: unknown): value is string {
  return typeof value === 'string' && /\S/u.test(value);
}

/** `what` of a node or edge in messages: its id when it has a usable one, else its index. */
function itemName(kind: 'node' | 'edge', item: unknown, index: number): string {
  const id = isPlainObject(item) ? item.id : undefined;
  return isNonBlankString(id) ? `${kind} '${id}'` : `${kind} at index ${index}`;
}

function has(obj: Record<string, unknown>, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(obj, key) && obj[key] !== undefined;
}

function checkArrayField(def: Record<string, unknown>, key: 'nodes' | 'edges', report: Report): unknown[] | undefined {
  if (!has(def, key)) {
    report([key], `workflow_definition.${key} is required (an array, possibly empty)`, 'missing');
    return undefined;
  }
  const value = def[key];
  if (!Array.isArray(value)) {
    report([key], `workflow_definition.${key} must be an array, got ${describe(value)}`, 'list_type');
    return undefined;
  }
  return value;
}

interface FieldSpec {
  required?: boolean;
  nonBlank?: boolean;
}

/** Checks `obj[key]` is a string (non-blank when asked). `label` is the field as a person reads it, e.g. `data.prompt`. */
function checkString(
  obj: Record<string, unknown>,
  key: string,
  path: Loc,
  what: string,
  label: string,
  report: Report,
  spec: FieldSpec = {},
): void {
  if (!has(obj, key)) {
    if (spec.required) report([...path, key], `${what}: ${label} is required`, 'missing');
    return;
  }
  const value = obj[key];
  if (typeof value !== 'string') {
    report([...path, key], `${what}: ${label} must be a string, got ${describe(value)}`, 'string_type');
  } else if (spec.nonBlank && value.length === 0) {
    report([...path, key], `${what}: ${label} must not be empty`, 'string_too_short');
  } else if (spec.nonBlank && !/\S/u.test(value)) {
    report([...path, key], `${what}: ${label} must not be blank (it holds only whitespace)`, 'string_pattern_mismatch');
  }
}

function checkBoolean(obj: Record<string, unknown>, key: string, path: Loc, what: string, label: string, report: Report): void {
  if (has(obj, key) && typeof obj[key] !== 'boolean') {
    report([...path, key], `${what}: ${label} must be true or false, got ${describe(obj[key])}`, 'bool_type');
  }
}

function checkNumber(obj: Record<string, unknown>, key: string, path: Loc, what: string, label: string, report: Report): void {
  if (!has(obj, key)) {
    report([...path, key], `${what}: ${label} is required`, 'missing');
    return;
  }
  const value = obj[key];
  if (typeof value !== 'number') {
    report([...path, key], `${what}: ${label} must be a number, got ${describe(value)}`, 'float_type');
  } else if (!Number.isFinite(value)) {
    report([...path, key], `${what}: ${label} must be a finite number`, 'finite_number');
  }
}

function checkEnum(
  obj: Record<string, unknown>,
  key: string,
  allowed: readonly string[],
  path: Loc,
  what: string,
  label: string,
  report: Report,
): void {
  if (!has(obj, key)) {
    report([...path, key], `${what}: ${label} is required (one of ${quoteList(allowed)})`, 'missing');
    return;
  }
  const value = obj[key];
  if (typeof value !== 'string') {
    report([...path, key], `${what}: ${label} must be one of ${quoteList(allowed)}, got ${describe(value)}`, 'string_type');
  } else if (!allowed.includes(value)) {
    report([...path, key], `${what}: ${label} '${value}' is unknown; use one of ${quoteList(allowed)}`, 'literal_error');
  }
}

function quoteList(values: readonly string[]): string {
  return values.map((v) => `'${v}'`).join(', ');
}

/** Checks `obj[key]` is an object; reports `missing` when required and absent. Returns it when it is one. */
function checkObjectField(
  obj: Record<string, unknown>,
  key: string,
  path: Loc,
  what: string,
  label: string,
  report: Report,
  required: boolean,
): Record<string, unknown> | undefined {
  if (!has(obj, key)) {
    if (required) report([...path, key], `${what}: ${label} is required (an object)`, 'missing');
    return undefined;
  }
  const value = obj[key];
  if (!isPlainObject(value)) {
    report([...path, key], `${what}: ${label} must be an object, got ${describe(value)}`, 'dict_type');
    return undefined;
  }
  return value;
}

function checkNode(node: unknown, index: number, report: Report): void {
  const path: Loc = ['nodes', index];
  if (!isPlainObject(node)) {
    report(path, `node at index ${index} must be an object with id, type and data, got ${describe(node)}`, 'dict_type');
    return;
  }
  const what = itemName('node', node, index);
  checkString(node, 'id', path, what, 'id', report, { required: true, nonBlank: true });
  checkEnum(node, 'type', WORKFLOW_NODE_TYPES, path, what, 'type', report);

  const position = checkObjectField(node, 'position', path, what, 'position', report, false);
  if (position) {
    checkNumber(position, 'x', [...path, 'position'], what, 'position.x', report);
    checkNumber(position, 'y', [...path, 'position'], what, 'position.y', report);
  }

  const data = checkObjectField(node, 'data', path, what, 'data', report, true);
  if (!data) return;
  const dataPath: Loc = [...path, 'data'];
  checkString(data, 'name', dataPath, what, 'data.name', report, { required: true });
  checkString(data, 'prompt', dataPath, what, 'data.prompt', report, { required: true, nonBlank: true });
  checkString(data, 'greeting', dataPath, what, 'data.greeting', report);
  checkBoolean(data, 'allow_interrupt', dataPath, what, 'data.allow_interrupt', report);
  checkBoolean(data, 'add_global_prompt', dataPath, what, 'data.add_global_prompt', report);
  checkBoolean(data, 'extraction_enabled', dataPath, what, 'data.extraction_enabled', report);
  checkString(data, 'disposition', dataPath, what, 'data.disposition', report);
  checkString(data, 'transfer_to', dataPath, what, 'data.transfer_to', report);

  if (!has(data, 'extraction_variables')) return;
  const variables = data.extraction_variables;
  if (!Array.isArray(variables)) {
    report(
      [...dataPath, 'extraction_variables'],
      `${what}: data.extraction_variables must be an array, got ${describe(variables)}`,
      'list_type',
    );
    return;
  }
  variables.forEach((variable, v) => {
    const varPath: Loc = [...dataPath, 'extraction_variables', v];
    const label = `data.extraction_variables[${v}]`;
    if (!isPlainObject(variable)) {
      report(varPath, `${what}: ${label} must be an object with name, type and prompt, got ${describe(variable)}`, 'dict_type');
      return;
    }
    checkString(variable, 'name', varPath, what, `${label}.name`, report, { required: true, nonBlank: true });
    checkEnum(variable, 'type', EXTRACTION_VARIABLE_TYPES, varPath, what, `${label}.type`, report);
    checkString(variable, 'prompt', varPath, what, `${label}.prompt`, report, { required: true });
  });
}

function checkEdge(edge: unknown, index: number, report: Report): void {
  const path: Loc = ['edges', index];
  if (!isPlainObject(edge)) {
    report(path, `edge at index ${index} must be an object with id, source, target and data, got ${describe(edge)}`, 'dict_type');
    return;
  }
  const what = itemName('edge', edge, index);
  checkString(edge, 'id', path, what, 'id', report, { required: true, nonBlank: true });
  checkString(edge, 'source', path, what, 'source (the id of the node it leaves)', report, { required: true, nonBlank: true });
  checkString(edge, 'target', path, what, 'target (the id of the node it enters)', report, { required: true, nonBlank: true });
  const data = checkObjectField(edge, 'data', path, what, 'data', report, true);
  if (!data) return;
  checkString(data, 'label', [...path, 'data'], what, 'data.label', report, { required: true, nonBlank: true });
  checkString(data, 'condition', [...path, 'data'], what, 'data.condition', report, { required: true, nonBlank: true });
}

// ---------------------------------------------------------------------------------------------------------
// Transfers (docs/voice.md "Transfers")

/**
 * `data.transfer_to` (a string; the structure pass reports other types) belongs on endCall nodes only, and must
 * be a template (rendered with the call's context when the call ends there) or a literal E.164 number or SIP URI.
 */
function checkTransferTo(node: unknown, index: number, report: Report): void {
  if (!isPlainObject(node) || !isPlainObject(node.data) || !has(node.data, 'transfer_to')) return;
  const value = node.data.transfer_to;
  if (typeof value !== 'string') return;
  const what = itemName('node', node, index);
  const loc: Loc = ['nodes', index, 'data', 'transfer_to'];
  if (isWorkflowNodeType(node.type) && node.type !== 'endCall') {
    report(loc, `${what}: data.transfer_to is only meaningful on an endCall node (a call is handed over when it ends), not on a ${node.type}`, 'workflow.transfer_to_not_end_node');
    return;
  }
  if (isTemplatedTransferTarget(value) || parseTransferTarget(value)) return;
  report(
    loc,
    `${what}: data.transfer_to ${JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}...` : value)} is neither an E.164 number ` +
      `('+15551234567') nor a SIP URI ('sip:desk@pbx.example.com'), nor a {{template}} that renders to one`,
    'workflow.transfer_to_invalid',
  );
}

// ---------------------------------------------------------------------------------------------------------
// Graph rules

/** A node or edge as the graph rules see it: its index, and `undefined` where the structure pass found it malformed. */
type Indexed<T> = T & { index: number };
type LooseNode = Indexed<GraphNodeShape>;
type LooseEdge = Indexed<GraphEdgeShape>;

function stringOrUndefined(obj: Record<string, unknown> | undefined, key: string): string | undefined {
  const value = obj?.[key];
  return isNonBlankString(value) ? value : undefined;
}

/** Reports each item that repeats the id of an earlier one (`first` resolves an id to the item the graph keeps). */
function reportDuplicateIds<T extends { index: number; id?: string }>(
  items: readonly T[],
  first: (id: string) => T | undefined,
  kind: 'node' | 'edge',
  field: 'nodes' | 'edges',
  report: Report,
): void {
  for (const item of items) {
    if (item.id === undefined) continue;
    const kept = first(item.id);
    if (kept && kept !== item) {
      report(
        [field, item.index, 'id'],
        `${kind} id '${item.id}' is used twice (${field} ${kept.index} and ${item.index}); ${kind} ids must be unique`,
        `workflow.${kind}_id_duplicate`,
      );
    }
  }
}

function checkGraph(rawNodes: unknown[], rawEdges: unknown[], report: Report): void {
  const nodes: LooseNode[] = rawNodes.map((raw, index) => {
    const obj = isPlainObject(raw) ? raw : undefined;
    const type = obj?.type;
    return { index, id: stringOrUndefined(obj, 'id'), type: isWorkflowNodeType(type) ? type : undefined };
  });
  const edges: LooseEdge[] = rawEdges.map((raw, index) => {
    const obj = isPlainObject(raw) ? raw : undefined;
    const data = isPlainObject(obj?.data) ? obj.data : undefined;
    return {
      index,
      id: stringOrUndefined(obj, 'id'),
      source: stringOrUndefined(obj, 'source'),
      target: stringOrUndefined(obj, 'target'),
      label: stringOrUndefined(data, 'label'),
    };
  });

  // Unique ids. The first node with an id is the one edges resolve to.
  const graph = new Graph(nodes, edges);
  reportDuplicateIds(nodes, (id) => graph.node(id), 'node', 'nodes', report);
  reportDuplicateIds(edges, (id) => graph.edge(id), 'edge', 'edges', report);

  // Edge endpoints exist.
  const edgeName = (edge: LooseEdge): string => (edge.id !== undefined ? `edge '${edge.id}'` : `edge at index ${edge.index}`);
  for (const edge of edges) {
    if (edge.source !== undefined && !graph.node(edge.source)) {
      report(
        ['edges', edge.index, 'source'],
        `${edgeName(edge)} leaves node '${edge.source}', which does not exist`,
        'workflow.edge_source_missing',
      );
    }
    if (edge.target !== undefined && !graph.node(edge.target)) {
      report(
        ['edges', edge.index, 'target'],
        `${edgeName(edge)} targets node '${edge.target}', which does not exist`,
        'workflow.edge_target_missing',
      );
    }
  }

  // Node type counts.
  const nodeName = (node: LooseNode): string => (node.id !== undefined ? `node '${node.id}'` : `node at index ${node.index}`);
  const starts = graph.nodesOfType('startCall');
  if (starts.length === 0) {
    report(
      ['nodes'],
      nodes.length === 0
        ? 'the workflow has no nodes; it needs exactly one startCall node, where every call begins'
        : 'the workflow has no startCall node; it needs exactly one, where every call begins',
      'workflow.start_node_count',
    );
  }
  for (const extra of starts.slice(1)) {
    report(
      ['nodes', extra.index, 'type'],
      `${nodeName(extra)} is a second startCall node (the first is ${nodeName(starts[0])}); a workflow has exactly one`,
      'workflow.start_node_count',
    );
  }
  const globals = graph.nodesOfType('globalNode');
  for (const extra of globals.slice(1)) {
    report(
      ['nodes', extra.index, 'type'],
      `${nodeName(extra)} is a second globalNode (the first is ${nodeName(globals[0])}); a workflow has at most one`,
      'workflow.global_node_count',
    );
  }

  // Rules on edges by the type of the node they touch.
  const typeOf = (id: string | undefined): WorkflowNodeType | undefined => graph.node(id)?.type;
  for (const edge of edges) {
    const sourceType = typeOf(edge.source);
    const targetType = typeOf(edge.target);
    if (targetType === 'startCall') {
      report(
        ['edges', edge.index, 'target'],
        `${edgeName(edge)} enters the startCall node '${edge.target}'; no edge may lead into the start of a call`,
        'workflow.start_node_incoming_edge',
      );
    }
    if (sourceType === 'endCall') {
      report(
        ['edges', edge.index, 'source'],
        `${edgeName(edge)} leaves the endCall node '${edge.source}'; a call ends there, so it can have no outgoing edge`,
        'workflow.end_node_outgoing_edge',
      );
    }
    if (sourceType === 'globalNode') {
      report(
        ['edges', edge.index, 'source'],
        `${edgeName(edge)} leaves the globalNode '${edge.source}'; the globalNode takes no edges`,
        'workflow.global_node_edge',
      );
    }
    if (targetType === 'globalNode') {
      report(
        ['edges', edge.index, 'target'],
        `${edgeName(edge)} enters the globalNode '${edge.target}'; the globalNode takes no edges`,
        'workflow.global_node_edge',
      );
    }
  }

  // Nodes that need an incoming edge. Every edge naming the node as target counts, self-loops included.
  for (const node of nodes) {
    if (node.id === undefined || graph.hasIncomingEdge(node.id)) continue;
    if (node.type === 'endCall') {
      report(
        ['nodes', node.index],
        `endCall node '${node.id}' has no incoming edge, so no call can end there; connect a node to it or remove it`,
        'workflow.end_node_no_incoming_edge',
      );
    } else if (node.type === 'agentNode') {
      report(
        ['nodes', node.index],
        `agentNode '${node.id}' has no incoming edge, so no call can reach it; connect a node to it or remove it`,
        'workflow.agent_node_no_incoming_edge',
      );
    }
  }

  // Labels of the edges leaving one node are distinct once normalized.
  const seenLabels = new Map<string, Map<string, LooseEdge>>();
  for (const edge of edges) {
    if (edge.source === undefined || edge.label === undefined) continue;
    let bySource = seenLabels.get(edge.source);
    if (!bySource) seenLabels.set(edge.source, (bySource = new Map()));
    const normalized = normalizeEdgeLabel(edge.label);
    const first = bySource.get(normalized);
    if (first) {
      report(
        ['edges', edge.index, 'data', 'label'],
        `${edgeName(edge)} label '${edge.label}' collides with ${edgeName(first)} label '${first.label}' ` +
          `(both read '${normalized}'); the edges leaving node '${edge.source}' need distinct labels`,
        'workflow.edge_label_duplicate',
      );
    } else {
      bySource.set(normalized, edge);
    }
  }
}
