import type { PendingEvent, PendingFact, WebhookEventType } from '../../../core/ports/event-publisher.port.js';
import type { SqliteDatabase } from './database.js';

/**
 * The event markers of runs and campaigns on SQLite (migration 11): `pending_events` is a JSON array of
 * `{key, type, at (ms), previous_state?, reason?}`, NULL when empty (a partial index finds the marked rows).
 * `appendPendingEvent` runs inside the caller's transaction, the one that writes the fact.
 */
interface StoredPendingEvent { key: string; type: string; at: number; previous_state?: string; reason?: string }

const TABLES = { run: 'runs', campaign: 'campaigns' } as const;

export const pendingEventToJson = (e: PendingEvent): string => JSON.stringify({
  key: e.key, type: e.type, at: e.at.getTime(),
  ...(e.previousState !== undefined ? { previous_state: e.previousState } : {}), ...(e.reason !== undefined ? { reason: e.reason } : {}),
} satisfies StoredPendingEvent);

const pendingEventFromStored = (s: StoredPendingEvent): PendingEvent => ({
  key: s.key, type: s.type as WebhookEventType, at: new Date(s.at),
  ...(s.previous_state !== undefined ? { previousState: s.previous_state } : {}), ...(s.reason !== undefined ? { reason: s.reason } : {}),
});

const statements = new WeakMap<SqliteDatabase, ReturnType<typeof prepare>>();

function prepare(db: SqliteDatabase) {
  const append = (table: string) => db.prepare<[string, number]>(
    `UPDATE ${table} SET pending_events = json_insert(COALESCE(pending_events, '[]'), '$[#]', json(?)) WHERE id = ?`);
  const clear = (table: string) => db.prepare<[string, number, number]>(
    `UPDATE ${table} SET pending_events = (
       SELECT CASE WHEN COUNT(*) = 0 THEN NULL ELSE json_group_array(json(value)) END
       FROM json_each(${table}.pending_events) WHERE json_extract(value, '$.key') <> ?)
     WHERE organization_id = ? AND id = ? AND pending_events IS NOT NULL`);
  return {
    append: { run: append(TABLES.run), campaign: append(TABLES.campaign) },
    clear: { run: clear(TABLES.run), campaign: clear(TABLES.campaign) },
    pending: db.prepare<{ limit: number }, { kind: PendingFact['kind']; organization_id: number; id: number; pending_events: string }>(
      `SELECT * FROM (SELECT 'run' AS kind, organization_id, id, pending_events FROM runs WHERE pending_events IS NOT NULL LIMIT @limit)
       UNION ALL
       SELECT * FROM (SELECT 'campaign' AS kind, organization_id, id, pending_events FROM campaigns WHERE pending_events IS NOT NULL LIMIT @limit)`),
  };
}

const of = (db: SqliteDatabase) => {
  let s = statements.get(db);
  if (!s) statements.set(db, (s = prepare(db)));
  return s;
};

/** Adds the marker to the row (call inside the transaction that writes the fact). */
export function appendPendingEvent(db: SqliteDatabase, kind: PendingFact['kind'], id: number, event: PendingEvent): void {
  of(db).append[kind].run(pendingEventToJson(event), id);
}

/** Removes the marker `key` from the row. Idempotent. */
export function clearPendingEvent(db: SqliteDatabase, kind: PendingFact['kind'], organizationId: number, id: number, key: string): void {
  of(db).clear[kind].run(key, organizationId, id);
}

/** The markers left on rows, oldest `at` first, at most `limit`. */
export function listPendingEvents(db: SqliteDatabase, limit: number): PendingFact[] {
  const facts: PendingFact[] = [];
  for (const r of of(db).pending.all({ limit })) {
    for (const e of JSON.parse(r.pending_events) as StoredPendingEvent[]) {
      facts.push({ kind: r.kind, organizationId: r.organization_id, id: r.id, event: pendingEventFromStored(e) });
    }
  }
  return facts.sort((a, b) => a.event.at.getTime() - b.event.at.getTime()).slice(0, limit);
}
