/**
 * What the model is given at a node (docs/conversation.md): the system prompt and the transition tools. Pure.
 *
 * System prompt: the globalNode's prompt, then a blank line, then the node's prompt, both rendered with the
 * conversation's templates. The global prompt is included only where the node's `add_global_prompt` is `true`,
 * as the API contract states; an absent flag means no global prompt. (Dograh treats an absent flag as true; our
 * editors and the example write the flag explicitly, so the literal reading is the predictable one.)
 *
 * Tools: one per edge leaving the node, named by the edge's normalized label, described by its rendered
 * `condition`, taking no parameters. An endCall node offers none: the model can only say its last words.
 */
import type { ToolSpec } from '../ports/language-model.port.js';
import type { GraphEdge, GraphNode, WorkflowGraph } from '../workflows/workflow-graph.js';
import { renderTemplate, type TemplateContext } from './template.js';

export interface TransitionTool {
  spec: ToolSpec;
  edge: GraphEdge;
  target: GraphNode;
}

export function systemPromptFor(graph: WorkflowGraph, node: GraphNode, context: TemplateContext, now: Date): string {
  const parts: string[] = [];
  const global = graph.globalNode;
  if (global && node.data.add_global_prompt === true && node.id !== global.id) {
    parts.push(renderTemplate(global.data.prompt, context, now));
  }
  parts.push(renderTemplate(node.data.prompt, context, now));
  return parts.join('\n\n');
}

export function transitionToolsFor(graph: WorkflowGraph, node: GraphNode, context: TemplateContext, now: Date): TransitionTool[] {
  if (node.type === 'endCall') return [];
  return graph.transitions(node.id).map(({ edge, toolName, target }) => ({
    spec: {
      name: toolName,
      description: renderTemplate(edge.data.condition, context, now),
      parameters: { type: 'object', properties: {} },
    },
    edge,
    target,
  }));
}

/** The rendered greeting of a node, or undefined when it has none (absent or blank once rendered). */
export function greetingFor(node: GraphNode, context: TemplateContext, now: Date): string | undefined {
  const override = context.greeting_override;
  const template = typeof override === 'string' && override.trim() !== '' ? override : node.data.greeting;
  if (typeof template !== 'string') return undefined;
  const text = renderTemplate(template, context, now).trim();
  return text === '' ? undefined : text;
}
