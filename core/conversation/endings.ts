/**
 * How conversations end (docs/conversation.md): the disposition of each ending and the instructions the model gets when
 * the engine, not the caller, asks it to speak (idle check-in, goodbyes). Pure.
 */
import type { ConversationEndReason } from '../ports/conversation-record.port.js';
import type { GraphNode } from '../workflows/workflow-graph.js';

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

function nonBlank(value: unknown): string | undefined {
  return typeof value === 'string' && /\S/u.test(value) ? value : undefined;
}
