import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { CONVERSATION_STATE_VERSION, type ConversationState } from '../../core/conversation/conversation-state.js';
import { ConflictError } from '../../core/errors.js';
import type { ChatRepository } from '../../core/ports/chat.repository.port.js';
import type { WorkflowRepository } from '../../core/ports/workflow.repository.port.js';
import { createExampleWorkflow } from './example-workflow.js';

export interface ChatRepositoryHarness {
  repo: ChatRepository;
  /** The same store's workflows: a chat belongs to a workflow and one of its definitions. */
  workflows: WorkflowRepository;
  newOrganization(name: string): Promise<number>;
  cleanup(): Promise<void>;
}

const t0 = new Date('2026-03-01T10:00:00.000Z');
const at = (s: number) => new Date(t0.getTime() + s * 1000);

/** A conversation state as the engine writes it, with keys MongoDB would refuse as field names. */
export function sampleConversationState(over: Partial<ConversationState> = {}): ConversationState {
  return {
    version: CONVERSATION_STATE_VERSION,
    status: 'active',
    node_id: 'start',
    node_path: ['start'],
    messages: [{ role: 'assistant', text: 'Hi, am I speaking with Ada?', node_id: 'start', created_at: t0.toISOString(), ended_at: t0.toISOString() }],
    history: [{ role: 'assistant', content: 'Hi, am I speaking with Ada?' }],
    initial_context: { first_name: 'Ada', 'odd.key': { $dollar: 1 } },
    gathered_context: {},
    disposition: null,
    end_reason: null,
    usage: { prompt_tokens: 0, completion_tokens: 0 },
    log: [{ type: 'node_entered', at: t0.toISOString(), node_id: 'start', node_name: 'Greeting' }],
    idle_strikes: 0,
    awaiting_reply: false,
    started_at: t0.toISOString(),
    ended_at: null,
    ...over,
  };
}

/**
 * The ChatRepository contract every storage adapter runs (SQLite always; MongoDB where reachable): store ids,
 * the state read back as written, the revision check of `save` (one of two writers of the same revision wins),
 * newest-first pages with the total, and tenant scoping on every method.
 */
export function runChatRepositoryContract(label: string, make: () => Promise<ChatRepositoryHarness>): void {
  describe(`ChatRepository contract: ${label}`, () => {
    let h: ChatRepositoryHarness;
    let orgA: number;
    let orgB: number;
    let wfA: { id: number; definitionId: number };
    let wfA2: { id: number; definitionId: number };
    let wfB: { id: number; definitionId: number };
    const workflow = (org: number) => createExampleWorkflow(h.workflows, org, t0);
    const chat = (org: number, wf: { id: number; definitionId: number }, now = t0, state = sampleConversationState()) =>
      h.repo.create(org, { workflowId: wf.id, definitionId: wf.definitionId, state, now });

    beforeEach(async () => {
      h = await make();
      orgA = await h.newOrganization('Org A');
      orgB = await h.newOrganization('Org B');
      wfA = await workflow(orgA);
      wfA2 = await workflow(orgA);
      wfB = await workflow(orgB);
    });
    afterEach(async () => {
      await h.cleanup();
    });

    it('creates at revision 1 with a store id and reads the state back as written', async () => {
      const c = await chat(orgA, wfA);
      expect(c).toEqual({
        id: expect.any(Number), organizationId: orgA, workflowId: wfA.id, definitionId: wfA.definitionId,
        state: sampleConversationState(), revision: 1, createdAt: t0, updatedAt: t0,
      });
      expect(c.id).toBeGreaterThan(0);
      const d = await chat(orgA, wfA);
      expect(d.id).not.toBe(c.id);
      expect(await h.repo.get(orgA, wfA.id, c.id)).toEqual(c);
      expect(await h.repo.get(orgA, wfA.id, 999_999)).toBeNull();
    });

    it('saves a new state when the revision read is still current, and bumps it', async () => {
      const c = await chat(orgA, wfA);
      const ended = sampleConversationState({
        status: 'ended', disposition: 'appointment_confirmed', end_reason: 'end_node', ended_at: at(5).toISOString(),
        gathered_context: { will_attend: true, mapped_call_disposition: 'appointment_confirmed' }, usage: { prompt_tokens: 12, completion_tokens: 3 },
      });
      const saved = await h.repo.save(orgA, c.id, { expectedRevision: 1, state: ended, now: at(5) });
      expect(saved).toEqual({ ...c, state: ended, revision: 2, updatedAt: at(5) });
      expect(await h.repo.get(orgA, wfA.id, c.id)).toEqual(saved);
    });

    it('hands the saved state back as given, without reading the JSON it just wrote back', async () => {
      const c = await chat(orgA, wfA);
      const next = sampleConversationState({ idle_strikes: 1 });
      const saved = await h.repo.save(orgA, c.id, { expectedRevision: 1, state: next, now: at(5) });
      expect(saved!.state).toBe(next);
      expect((await h.repo.get(orgA, wfA.id, c.id))!.state).toEqual(next);
    });

    it('gives every read a state of its own, which the reader may change', async () => {
      const c = await chat(orgA, wfA);
      const first = (await h.repo.get(orgA, wfA.id, c.id))!;
      first.state.messages.push({ role: 'user', text: 'changed by the reader', node_id: 'start', created_at: at(1).toISOString() });
      first.state.node_path.push('elsewhere');
      expect((await h.repo.get(orgA, wfA.id, c.id))!.state).toEqual(c.state);
    });

    it('refuses a save of a revision another writer already moved on, writing nothing', async () => {
      const c = await chat(orgA, wfA);
      const first = sampleConversationState({ node_id: 'confirm', node_path: ['start', 'confirm'] });
      const second = sampleConversationState({ node_id: 'end_wrong_person', node_path: ['start', 'end_wrong_person'] });
      const results = await Promise.allSettled([
        h.repo.save(orgA, c.id, { expectedRevision: 1, state: first, now: at(1) }),
        h.repo.save(orgA, c.id, { expectedRevision: 1, state: second, now: at(2) }),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect(refused.reason).toBeInstanceOf(ConflictError);
      expect((refused.reason as ConflictError).code).toBe('chat_busy');
      const stored = await h.repo.get(orgA, wfA.id, c.id);
      expect(stored!.revision).toBe(2);
      const winner = (results.find((r) => r.status === 'fulfilled') as PromiseFulfilledResult<unknown>).value;
      expect(stored).toEqual(winner);
    });

    it('lists a workflow\'s chats newest first (ties by id), paginated, with the total', async () => {
      const c1 = await chat(orgA, wfA, at(1));
      const c2 = await chat(orgA, wfA, at(3));
      const c3 = await chat(orgA, wfA, at(3));
      const c4 = await chat(orgA, wfA, at(2));
      await chat(orgA, wfA2, at(9));
      await chat(orgB, wfB, at(9));
      const p1 = await h.repo.listByWorkflow(orgA, wfA.id, { page: 1, limit: 3 });
      expect(p1.totalCount).toBe(4);
      expect(p1.chats.map((c) => c.id)).toEqual([c3.id, c2.id, c4.id]);
      expect(p1.chats[0]).toEqual(c3);
      const p2 = await h.repo.listByWorkflow(orgA, wfA.id, { page: 2, limit: 3 });
      expect(p2.chats.map((c) => c.id)).toEqual([c1.id]);
      expect(await h.repo.listByWorkflow(orgA, wfA.id, { page: 3, limit: 3 })).toEqual({ chats: [], totalCount: 4 });
    });

    it('scopes every method by organization (and get by workflow)', async () => {
      const c = await chat(orgA, wfA);
      expect(await h.repo.get(orgB, wfA.id, c.id)).toBeNull();
      expect(await h.repo.get(orgA, wfA2.id, c.id)).toBeNull();
      expect(await h.repo.save(orgB, c.id, { expectedRevision: 1, state: sampleConversationState({ status: 'ended' }), now: at(1) })).toBeNull();
      expect(await h.repo.get(orgA, wfA.id, c.id)).toEqual(c);
      expect(await h.repo.listByWorkflow(orgB, wfA.id, { page: 1, limit: 10 })).toEqual({ chats: [], totalCount: 0 });
      expect(await h.repo.save(orgA, 999_999, { expectedRevision: 1, state: sampleConversationState(), now: at(1) })).toBeNull();
    });
  });
}
