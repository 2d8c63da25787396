/**
 * How conversations end (docs/conversation.md): the disposition of each ending and the instructions the model gets when
 * the engine, not the caller, asks it to speak (idle check-in, goodbyes). Pure.
 */
import { parseTransferTarget } from '../calls/transfer-target.js';
import type { ConversationEndReason, ConversationTransfer } from '../ports/conversation-record.port.js';
import type { GraphNode } from '../workflows/workflow-graph.js';
import { renderTemplate, type TemplateContext } from './template.js';

/** First silence: the model checks in (given as a user-role instruction, as Dograh does). */
export const IDLE_CHECK_IN_INSTRUCTION =
  "The user has been quiet. Politely and briefly ask if they're still there.";

/** Second silence in a row: the model says goodbye, then the conversation ends with `user_idle`. */
export const IDLE_GOODBYE_INSTRUCTION =
  'The user has still not answered. We will be disconnecting the call now. Wish them a good day and say goodbye ' +
  'in one short sentence.';

/** The time limit, when the driver asks for a goodbye. */
export const MAX_DURATION_GOODBYE_INSTRUCTION =
  'The call has reached its time limit. Apologize briefly, say goodbye in one short sentence and do not ask anything.';

/** The disposition a conversation ending at `node` for `reason` gets:
 * - at an endCall node (whatever ended it, its last words or a hang-up during them): the node's `disposition`,
 *   else `completed`;
 * - a hang-up elsewhere: `gathered_context.call_disposition` when an extraction set one, else `completed`;
 * - `user_idle` and `max_duration`: the reason itself, so retry rules can see how the call ended.
 */
export function dispositionFor(
  reason: ConversationEndReason,
  node: GraphNode,
  gatheredContext: Record<string, unknown>,
): string {
  if (reason === 'user_idle' || reason === 'max_duration') return reason;
  if (node.type === 'endCall') return nonBlank(node.data.disposition) ?? 'completed';
  return nonBlank(gatheredContext.call_disposition) ?? 'completed';
}

/**
 * The hand-over a conversation ending at `node` for `reason` asks for (docs/voice.md "Transfers"): only when an
 * endCall node with a non-blank `transfer_to` ended the conversation with its last words (`end_node`; a hang-up
 * during them leaves nobody to hand over). `transfer_to` is rendered with `context` (after the node's extraction,
 * so gathered values can name the target); `to` is the normalized address when the result parses as E.164 or a
 * SIP URI (`valid: true`), else the rendered text as it is (`valid: false`). The disposition follows:
 * `transferred` (what the agent did; a call's transfer use case may still record `transfer_failed`), or
 * `transfer_failed` when the rendered target is unusable. Undefined: no transfer.
 */
export function transferFor(
  reason: ConversationEndReason,
  node: GraphNode,
  context: TemplateContext,
  now: Date,
): { transfer: ConversationTransfer; disposition: 'transferred' | 'transfer_failed' } | undefined {
  if (reason !== 'end_node' || node.type !== 'endCall') return undefined;
  const template = nonBlank(node.data.transfer_to);
  if (template === undefined) return undefined;
  const rendered = renderTemplate(template, context, now).trim();
  const target = parseTransferTarget(rendered);
  return target
    ? { transfer: { to: target.address, valid: true }, disposition: 'transferred' }
    : { transfer: { to: rendered, valid: false }, disposition: 'transfer_failed' };
}

function nonBlank(value: unknown): string | undefined {
  return typeof value === 'string' && /\S/u.test(value) ? value : undefined;
}
