import type { AiService } from '../ai-services/ai-service.js';

/** A service to store: every field of `AiService` but the ones the store assigns. */
export type NewAiService = Omit<AiService, 'id' | 'organizationId' | 'createdAt' | 'updatedAt'> & { now: Date };

export interface AiServicePatch {
  name?: string;
  /** Given together when the credentials change (both replace the stored ones whole). */
  settings?: Record<string, unknown>;
  secrets?: Record<string, string>;
  now: Date;
}

/** AI services (API.md 10). Every method is scoped by organization: a record of another one is never seen. */
export const AiServiceRepository = Symbol.for('callplane.AiServiceRepository');
export interface AiServiceRepository {
  /**
   * Stores a service and returns it with its new id. Throws `ConflictError('ai_service_name_taken')` when the
   * organization already has the name (case-insensitively). Not idempotent.
   */
  create(organizationId: number, input: NewAiService): Promise<AiService>;
  /** The service, or null when absent or in another organization. */
  get(organizationId: number, id: number): Promise<AiService | null>;
  /** The organization's services, oldest first (created_at, then id); empty when none. */
  list(organizationId: number): Promise<AiService[]>;
  /**
   * Changes the given fields and `updatedAt`. Returns null when absent or in another organization. Throws
   * `ConflictError('ai_service_name_taken')` on a name another service of the organization has. Idempotent.
   */
  update(organizationId: number, id: number, patch: AiServicePatch): Promise<AiService | null>;
  /** Deletes the service. False when absent or in another organization. Idempotent. */
  delete(organizationId: number, id: number): Promise<boolean>;
}
