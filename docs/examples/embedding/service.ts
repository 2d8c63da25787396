// A small service that embeds Callplane's core with its own adapters: its own storage (in memory), its own
// password hashing and tokens (node:crypto), its own HTTP (node:http). No express, no inversify, no SQLite.
import { createHash, randomBytes, randomUUID, scryptSync, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import {
  Authenticate, CreateApiKey, DomainError, SessionIssuer, SignUp, systemClock,
  type PasswordHasher, type TokenService,
} from 'callplane/core';
import { MemoryIdentityRepository } from './memory-identity.repository.js';

const passwords: PasswordHasher = {
  async hash(password) {
    const salt = randomBytes(16);
    return `${salt.toString('hex')}:${scryptSync(password, salt, 32).toString('hex')}`;
  },
  async verify(password, stored) {
    const [salt, digest] = stored.split(':');
    if (!salt || !digest) return false;
    const actual = scryptSync(password, Buffer.from(salt, 'hex'), 32);
    const expected = Buffer.from(digest, 'hex');
    return actual.length === expected.length && timingSafeEqual(actual, expected);
  },
};
const tokens: TokenService = {
  randomToken: (bytes = 32) => randomBytes(bytes).toString('base64url'),
  digest: (t) => createHash('sha256').update(t).digest('hex'),
  equalDigests: (a, b) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b)),
  uuid: () => randomUUID(),
};

/** Wires the core use cases to this service's adapters. */
export function createEmbeddedCore() {
  const identities = new MemoryIdentityRepository();
  const sessions = new SessionIssuer(identities, tokens, systemClock, 3_600_000);
  return {
    signUp: new SignUp(identities, passwords, sessions, systemClock, 'open'),
    authenticate: new Authenticate(identities, tokens, systemClock),
    createApiKey: new CreateApiKey(identities, tokens, systemClock),
  };
}

async function readJson(req: import('node:http').IncomingMessage): Promise<any> {
  let body = '';
  for await (const chunk of req) body += chunk;
  return body ? JSON.parse(body) : {};
}

/** POST /signup {email,password} → {token}; POST /keys (Bearer) → {api_key}; GET /whoami (X-API-Key) → principal. */
export function createEmbeddedServer(): Server {
  const core = createEmbeddedCore();
  return createServer(async (req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    try {
      if (req.method === 'POST' && req.url === '/signup') {
        const { email, password } = await readJson(req);
        const s = await core.signUp.execute({ email, password });
        return send(200, { token: s.token, organization_id: s.user.organizationId });
      }
      const bearer = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
      const apiKey = typeof req.headers['x-api-key'] === 'string' ? req.headers['x-api-key'] : undefined;
      const principal = await core.authenticate.execute({ bearerToken: bearer, apiKey });
      if (req.method === 'POST' && req.url === '/keys') {
        const { secret } = await core.createApiKey.execute(principal, 'embedded');
        return send(200, { api_key: secret });
      }
      if (req.method === 'GET' && req.url === '/whoami') return send(200, principal);
      return send(404, { detail: 'Not Found' });
    } catch (e) {
      if (e instanceof DomainError) return send(e.kind === 'unauthenticated' ? 401 : e.kind === 'forbidden' ? 403 : 400, { detail: e.detail, code: e.code });
      return send(500, { detail: 'Internal server error' });
    }
  });
}
