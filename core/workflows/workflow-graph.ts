/**
 * The workflow definition as a graph (docs/api.md, docs/conversation.md): nodes by id, the edges leaving each node, the
 * start node, the globalNode, and the tool name each edge becomes for the model. One reading of the graph, used
 * by both the validator (on untrusted, possibly half-formed input) and the conversation engine (on a valid
 * definition), so "which node does an id name" and "what is an edge's tool called" are decided once.
 *
 * - An id names the FIRST node (edge) carrying it; later duplicates are what the validator reports.
 * - The start node is the first `startCall` node; the globalNode is the first `globalNode`.
 * - An edge's tool name is `normalizeEdgeLabel(label)`.
 */
import type { WorkflowDefinition, WorkflowEdge, WorkflowNode, WorkflowNodeType } from './workflow-definition.js';

/**
 * The form in which edge labels of one node must be distinct, and the name of the tool the model calls to take
 * the edge: lower-cased, then every character that is not an ASCII letter or digit (each Unicode code point)
 * replaced by `_`. `"Yes!"` and `"yes?"` both become `"yes_"`. The ASCII restriction is deliberate: tool names
 * allow only `[a-z0-9_]`.
 */
export function normalizeEdgeLabel(label: string): string {
  return label.toLowerCase().replace(/[^a-z0-9]/gu, '_');
}

/** The least a node must say to sit in a graph; the validator's half-formed nodes leave fields undefined. */
export interface GraphNodeShape {
  id?: string;
  type?: WorkflowNodeType;
}

/** The least an edge must say to sit in a graph. */
export interface GraphEdgeShape {
  id?: string;
  source?: string;
  target?: string;
  label?: string;
}

/** A read-only graph over nodes `N` and edges `E`, in the order given. Never throws. */
export class Graph<N extends GraphNodeShape, E extends GraphEdgeShape> {
  private readonly nodesById = new Map<string, N>();
  private readonly edgesById = new Map<string, E>();
  private readonly edgesBySource = new Map<string, E[]>();
  private readonly targets = new Set<string>();

  constructor(
    readonly nodes: readonly N[],
    readonly edges: readonly E[],
  ) {
    for (const node of nodes) {
      if (node.id !== undefined && !this.nodesById.has(node.id)) this.nodesById.set(node.id, node);
    }
    for (const edge of edges) {
      if (edge.id !== undefined && !this.edgesById.has(edge.id)) this.edgesById.set(edge.id, edge);
      if (edge.source !== undefined) {
        const list = this.edgesBySource.get(edge.source);
        if (list) list.push(edge);
        else this.edgesBySource.set(edge.source, [edge]);
      }
      if (edge.target !== undefined) this.targets.add(edge.target);
    }
  }

  /** The first node with this id, or undefined. */
  node(id: string | undefined): N | undefined {
    return id === undefined ? undefined : this.nodesById.get(id);
  }

  /** The first edge with this id, or undefined. */
  edge(id: string | undefined): E | undefined {
    return id === undefined ? undefined : this.edgesById.get(id);
  }

  /** The edges whose `source` is `nodeId`, in definition order (self-loops included). */
  outEdges(nodeId: string): readonly E[] {
    return this.edgesBySource.get(nodeId) ?? [];
  }

  /** Whether some edge names `nodeId` as its target (self-loops count). */
  hasIncomingEdge(nodeId: string): boolean {
    return this.targets.has(nodeId);
  }

  nodesOfType(type: WorkflowNodeType): N[] {
    return this.nodes.filter((n) => n.type === type);
  }

  /** The first `startCall` node. */
  get startNode(): N | undefined {
    return this.nodes.find((n) => n.type === 'startCall');
  }

  /** The first `globalNode`. */
  get globalNode(): N | undefined {
    return this.nodes.find((n) => n.type === 'globalNode');
  }

  /** The tool name of an edge (its normalized label); undefined when it has no label. */
  toolName(edge: E): string | undefined {
    return edge.label === undefined ? undefined : normalizeEdgeLabel(edge.label);
  }
}

/** A node of a valid definition's graph. */
export type GraphNode = WorkflowNode;

/** An edge of a valid definition's graph, with the graph's reading of it. */
export interface GraphEdge extends WorkflowEdge {
  label: string;
}

/**
 * The graph of a VALID workflow definition (checked by `assertValidWorkflowDefinition` first); the engine walks
 * it. `fromDefinition` keeps references to the definition's node and edge objects: do not mutate them.
 */
export class WorkflowGraph extends Graph<GraphNode, GraphEdge> {
  private constructor(
    readonly definition: WorkflowDefinition,
    readonly start: GraphNode,
  ) {
    super(
      definition.nodes,
      definition.edges.map((e) => ({ ...e, label: e.data.label })),
    );
  }

  /** Throws `Error` when the definition has no startCall node (a valid definition always has one). */
  static fromDefinition(definition: WorkflowDefinition): WorkflowGraph {
    const start = definition.nodes.find((n) => n.type === 'startCall');
    if (!start) throw new Error('a workflow graph needs a startCall node; validate the definition first');
    return new WorkflowGraph(definition, start);
  }

  /** The node with this id; throws `Error` when there is none (a stored conversation naming a vanished node). */
  requireNode(id: string): GraphNode {
    const node = this.node(id);
    if (!node) throw new Error(`node '${id}' is not in this workflow definition`);
    return node;
  }

  /** The edges leaving `nodeId`, each with the tool name the model calls to take it. */
  transitions(nodeId: string): { edge: GraphEdge; toolName: string; target: GraphNode }[] {
    return this.outEdges(nodeId).map((edge) => ({
      edge,
      toolName: normalizeEdgeLabel(edge.label),
      target: this.requireNode(edge.target),
    }));
  }
}
