/**
 * Joins the tool-call fragments of a streamed chat completion (`choices[0].delta.tool_calls[]`) into whole
 * calls. OpenAI sends the id and name in a call's first fragment and the `arguments` JSON over later ones, each
 * fragment carrying the call's `index`. Some compatible servers (Ollama, some proxies) give every parallel call
 * `index: 0`: a fragment bringing a new `id` at an index already seen starts a new call. Pure.
 */
import type { ToolCall } from '../../core/ports/language-model.port.js';

/** One element of `delta.tool_calls` as the wire carries it (every member optional). */
export interface ToolCallFragment {
  index?: number;
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
}

interface Slot {
  id: string;
  name: string;
  arguments: string;
}

export class ToolCallJoiner {
  private readonly slots: Slot[] = [];
  private readonly byIndex = new Map<number, Slot>();

  add(fragment: ToolCallFragment): void {
    const index = typeof fragment.index === 'number' ? fragment.index : 0;
    const id = typeof fragment.id === 'string' && fragment.id !== '' ? fragment.id : undefined;
    let slot = this.byIndex.get(index);
    if (!slot || (id !== undefined && slot.id !== '' && slot.id !== id)) {
      slot = { id: '', name: '', arguments: '' };
      this.slots.push(slot);
      this.byIndex.set(index, slot);
    }
    if (id !== undefined && slot.id === '') slot.id = id;
    const name = fragment.function?.name;
    // A name arrives once; servers that repeat it in every fragment must not double it.
    if (typeof name === 'string' && name !== '' && slot.name !== name) slot.name = slot.name === '' ? name : slot.name + name;
    const args = fragment.function?.arguments;
    if (typeof args === 'string') slot.arguments += args;
  }

  /** True once any fragment arrived. */
  get size(): number {
    return this.slots.length;
  }

  /**
   * The joined calls in arrival order. A call whose server sent no id gets `call_<n>`; empty arguments become
   * `{}` (a parameterless call); a fragment without a name yields nothing (no callable function).
   */
  calls(): ToolCall[] {
    return this.slots
      .map((s, n) => ({ id: s.id || `call_${n}`, name: s.name, arguments: s.arguments.trim() === '' ? '{}' : s.arguments }))
      .filter((c) => c.name !== '');
  }
}
