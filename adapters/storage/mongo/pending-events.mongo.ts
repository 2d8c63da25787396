import type { Db } from 'mongodb';
import type { PendingEvent, PendingFact, WebhookEventType } from '../../../core/ports/event-publisher.port.js';
import { Collections } from './mongo-schema.js';

/**
 * The event markers of runs and campaigns on MongoDB: `pendingEvents`, an array on the run or campaign document,
 * written by the same single-document update that writes the fact (`$push`), absent when empty (a partial index
 * finds the marked documents).
 */
export interface PendingEventDocument { key: string; type: string; at: Date; previousState?: string; reason?: string }

const COLLECTIONS = { run: Collections.runs, campaign: Collections.campaigns } as const;

export const pendingEventToDocument = (e: PendingEvent): PendingEventDocument => ({
  key: e.key, type: e.type, at: e.at,
  ...(e.previousState !== undefined ? { previousState: e.previousState } : {}), ...(e.reason !== undefined ? { reason: e.reason } : {}),
});

const pendingEventFromDocument = (d: PendingEventDocument): PendingEvent => ({
  key: d.key, type: d.type as WebhookEventType, at: new Date(d.at),
  ...(d.previousState !== undefined ? { previousState: d.previousState } : {}), ...(d.reason !== undefined ? { reason: d.reason } : {}),
});

interface Marked { _id: number; organizationId: number; pendingEvents?: PendingEventDocument[] }

/** The markers left on runs and campaigns, oldest `at` first, at most `limit`. */
export async function listPendingEventDocuments(db: Db, limit: number): Promise<PendingFact[]> {
  const facts: PendingFact[] = [];
  for (const kind of ['run', 'campaign'] as const) {
    const docs = await db.collection<Marked>(COLLECTIONS[kind]).find({ pendingEvents: { $exists: true } }, { projection: { _id: 1, organizationId: 1, pendingEvents: 1 } })
      .limit(limit).toArray();
    for (const d of docs) for (const e of d.pendingEvents ?? []) facts.push({ kind, organizationId: d.organizationId, id: d._id, event: pendingEventFromDocument(e) });
  }
  return facts.sort((a, b) => a.event.at.getTime() - b.event.at.getTime()).slice(0, limit);
}

/** Removes the marker `key` (and the field once empty). Idempotent. */
export async function clearPendingEventDocument(db: Db, kind: PendingFact['kind'], organizationId: number, id: number, key: string): Promise<void> {
  const c = db.collection<Marked>(COLLECTIONS[kind]);
  await c.updateOne({ _id: id, organizationId, pendingEvents: { $exists: true } }, { $pull: { pendingEvents: { key } } });
  await c.updateOne({ _id: id, organizationId, pendingEvents: { $size: 0 } }, { $unset: { pendingEvents: '' } });
}
