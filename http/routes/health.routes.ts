import { defineRoutes } from '../routing/route.js';
import { obj, str } from '../routing/schema-helpers.js';

export interface HealthRouteDeps {
  version: string;
  /** Resolves true when storage answers. */
  storageReachable(): Promise<boolean>;
}

export function healthRoutes(d: HealthRouteDeps) {
  return defineRoutes([
    {
      method: 'get', path: '/health', operationId: 'health', summary: 'Liveness and storage reachability', tags: ['health'], auth: 'none',
      response: obj({ status: { enum: ['ok', 'unavailable'] }, version: str() }, ['status', 'version']), errors: [503],
      handler: async ({ res }) => {
        let ok = false;
        try {
          ok = await d.storageReachable();
        } catch {
          ok = false;
        }
        if (!ok) {
          res.status(503).json({ status: 'unavailable', version: d.version, detail: 'storage cannot be reached', code: 'storage_unavailable' });
          return undefined;
        }
        return { status: 'ok', version: d.version };
      },
    },
  ]);
}
