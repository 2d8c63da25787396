/**
 * The call's transcript artifact (API.md 13: `{turns: [{role, text, node_id, start_ms, end_ms,
 * interrupted}]}`), built from the session's events: the caller's committed turns, and of the agent's
 * replies ONLY what the caller heard (a reply cut by a barge-in keeps the words played before the clear).
 * Times are milliseconds from the session's start. Pure.
 */
import type { TranscriptTurn } from '../conversation/conversation-record.js';
import type { VoiceSessionEvents } from './voice-session-events.js';

export class TranscriptBuilder {
  readonly turns: TranscriptTurn[] = [];

  constructor(
    events: VoiceSessionEvents,
    private readonly originMs: number,
  ) {
    events.on('user_turn', (e) => {
      const last = this.turns.at(-1);
      if (e.merged && last?.role === 'user') {
        last.text = `${last.text} ${e.text}`.trim();
        last.end_ms = this.rel(e.endMs);
        return;
      }
      this.turns.push({ role: 'user', text: e.text, node_id: e.node_id, start_ms: this.rel(e.startMs), end_ms: this.rel(e.endMs), interrupted: false });
    });
    events.on('agent_heard', (e) => {
      if (e.text.trim() === '') return;
      this.turns.push({
        role: 'assistant',
        text: e.text,
        node_id: e.node_id,
        start_ms: this.rel(e.startMs),
        end_ms: this.rel(e.endMs),
        interrupted: e.interrupted,
      });
    });
  }

  /** The artifact stored behind `transcript_url`. */
  artifact(): { turns: TranscriptTurn[] } {
    return { turns: this.turns.map((t) => ({ ...t })) };
  }

  private rel(ms: number): number {
    return Math.max(0, Math.round(ms - this.originMs));
  }
}
