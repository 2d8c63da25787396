/**
 * The graph an agent (a workflow) runs during a call: its `workflow_definition` (API.md section 7).
 *
 * A call enters at the one `startCall` node, moves along edges whose `condition` the model judges met, and
 * finishes at an `endCall` node. `agentNode`s are the steps between. The optional `globalNode` has no edges:
 * its prompt is added to every node whose `add_global_prompt` is true. Cycles are allowed (a conversation can
 * go back to an earlier step).
 *
 * These are plain data types; `validateWorkflowDefinition` (validate-workflow-definition.ts) checks that an
 * untrusted value has this shape and obeys the graph rules.
 */

/** The node types, in the order the docs list them. */
export const WORKFLOW_NODE_TYPES = ['startCall', 'agentNode', 'endCall', 'globalNode'] as const;
export type WorkflowNodeType = (typeof WORKFLOW_NODE_TYPES)[number];

/** The value types an extraction variable can take. */
export const EXTRACTION_VARIABLE_TYPES = ['string', 'number', 'boolean'] as const;
export type ExtractionVariableType = (typeof EXTRACTION_VARIABLE_TYPES)[number];

/** A value the agent gathers from the conversation at a node (it lands in the run's `gathered_context`). */
export interface ExtractionVariable {
  /** The key under which the value is stored; non-blank. */
  name: string;
  type: ExtractionVariableType;
  /** What to listen for, told to the model. */
  prompt: string;
}

/**
 * What a node does. `name` and a non-blank `prompt` are required on every node; the rest is optional.
 * Keys this type does not name (editor state, future options) are kept as sent.
 */
export interface NodeData {
  /** Shown in editors and logs. */
  name: string;
  /** The instructions for the model at this step; non-blank. */
  prompt: string;
  /** What the agent says first (meaningful on the `startCall` node). */
  greeting?: string;
  /** Whether the caller may interrupt the agent while it speaks. */
  allow_interrupt?: boolean;
  /** Whether the `globalNode`'s prompt is added to this node's prompt. */
  add_global_prompt?: boolean;
  /** Whether `extraction_variables` are gathered at this node. */
  extraction_enabled?: boolean;
  extraction_variables?: ExtractionVariable[];
  /** The disposition code a call ending here gets (meaningful on `endCall` nodes). */
  disposition?: string;
  /**
   * endCall only: after the last words, hand the caller over to this E.164 number or `sip:`/`sips:` URI
   * (`{{templates}}` rendered with the call's context). The run ends `transferred` or `transfer_failed`.
   */
  transfer_to?: string;
  [extra: string]: unknown;
}

export interface WorkflowNodePosition {
  x: number;
  y: number;
}

export interface WorkflowNode {
  /** Unique among the definition's nodes; non-blank. */
  id: string;
  type: WorkflowNodeType;
  /** Where an editor draws the node; no meaning for calls. */
  position?: WorkflowNodePosition;
  data: NodeData;
}

export interface WorkflowEdgeData {
  /**
   * A short name for the transition; non-blank. Labels of the edges leaving one node must stay distinct after
   * `normalizeEdgeLabel` (lower-cased, every non-alphanumeric character replaced by `_`).
   */
  label: string;
  /** When the model should take this edge, in plain words; non-blank. */
  condition: string;
}

export interface WorkflowEdge {
  /** Unique among the definition's edges; non-blank. */
  id: string;
  /** The id of the node the edge leaves. */
  source: string;
  /** The id of the node the edge enters. */
  target: string;
  data: WorkflowEdgeData;
}

export interface WorkflowDefinition {
  nodes: WorkflowNode[];
  edges: WorkflowEdge[];
}

export function isWorkflowNodeType(value: unknown): value is WorkflowNodeType {
  return typeof value === 'string' && (WORKFLOW_NODE_TYPES as readonly string[]).includes(value);
}
