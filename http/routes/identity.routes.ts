import type { CreateApiKey, GetMe, ListApiKeys, RevokeApiKey } from '../../core/identity/api-keys.use-case.js';
import type { LogOut } from '../../core/identity/authenticate.use-case.js';
import type { ApiKey, Organization, User } from '../../core/identity/identity.js';
import type { LogIn } from '../../core/identity/log-in.use-case.js';
import type { IssuedSession } from '../../core/identity/session-issuer.js';
import type { SignUp } from '../../core/identity/sign-up.use-case.js';
import { defineRoutes } from '../routing/route.js';
import { arr, dateTime, id, nullable, obj, pathParams, str } from '../routing/schema-helpers.js';

export interface IdentityRouteDeps {
  signUp: SignUp;
  logIn: LogIn;
  logOut: LogOut;
  getMe: GetMe;
  createApiKey: CreateApiKey;
  listApiKeys: ListApiKeys;
  revokeApiKey: RevokeApiKey;
}

const iso = (d: Date) => d.toISOString();
const isoOrNull = (d: Date | null) => (d ? d.toISOString() : null);

export const presentUser = (u: User) => ({ id: u.id, email: u.email, name: u.name, organization_id: u.organizationId });
const presentSession = (s: IssuedSession) => ({ token: s.token, token_type: 'bearer', expires_at: iso(s.session.expiresAt), user: presentUser(s.user) });
const presentKey = (k: ApiKey) => ({
  id: k.id, name: k.name, key_prefix: k.keyPrefix, created_at: iso(k.createdAt), last_used_at: isoOrNull(k.lastUsedAt), revoked_at: isoOrNull(k.revokedAt),
});

const userSchema = obj({ id: id(), email: str(), name: nullable(str()), organization_id: id() }, ['id', 'email', 'name', 'organization_id']);
const sessionSchema = obj(
  { token: str(), token_type: { const: 'bearer' }, expires_at: dateTime(), user: userSchema },
  ['token', 'token_type', 'expires_at', 'user'],
);
const email = str({ minLength: 3, maxLength: 320, pattern: '^[^\\s@]+@[^\\s@]+$', description: 'an email address (name@domain)' });
const apiKeySchema = obj(
  { id: id(), name: str(), key_prefix: str(), created_at: dateTime(), last_used_at: nullable(dateTime()), revoked_at: nullable(dateTime()) },
  ['id', 'name', 'key_prefix', 'created_at', 'last_used_at', 'revoked_at'],
);

export function identityRoutes(d: IdentityRouteDeps) {
  return defineRoutes([
    {
      method: 'post', path: '/auth/signup', operationId: 'signup', summary: 'Create a user and its organization', tags: ['auth'], auth: 'none',
      description: 'Allowed by CALLPLANE_SIGNUP: `first-user` (only while no user exists), `open`, or `closed` (403 `signup_disabled`). Duplicate email: 409 `email_taken`.',
      body: obj(
        { email, password: str({ minLength: 8, maxLength: 1024 }), name: nullable(str({ maxLength: 200 })), organization_name: nullable(str({ minLength: 1, maxLength: 200 })) },
        ['email', 'password'], { additionalProperties: false },
      ),
      response: sessionSchema, errors: [403, 409],
      handler: async ({ body }) =>
        presentSession(await d.signUp.execute({ email: body.email, password: body.password, name: body.name, organizationName: body.organization_name })),
    },
    {
      method: 'post', path: '/auth/login', operationId: 'login', summary: 'Log in with email and password', tags: ['auth'], auth: 'none',
      description: 'Returns a bearer token valid 7 days (CALLPLANE_TOKEN_TTL_HOURS). Wrong email or password: 401 `invalid_credentials`; repeated failures per email or address: 429.',
      body: obj({ email: str({ minLength: 1, maxLength: 320 }), password: str({ minLength: 1, maxLength: 1024 }) }, ['email', 'password'], { additionalProperties: false }),
      response: sessionSchema, errors: [429],
      handler: async ({ body, req }) =>
        presentSession(await d.logIn.execute({ email: body.email, password: body.password, clientAddress: req.ip ?? req.socket.remoteAddress ?? 'unknown' })),
    },
    {
      method: 'post', path: '/auth/logout', operationId: 'logout', summary: 'Revoke the session token in use', tags: ['auth'], auth: 'session', bodyOptional: true,
      description: 'With an API key: 403 `session_required` (revoke a key with `DELETE /user/api-keys/{api_key_id}`).',
      response: obj({ logged_out: { const: true } }, ['logged_out']), errors: [403],
      handler: async ({ principal }) => {
        await d.logOut.execute(principal);
        return { logged_out: true };
      },
    },
    {
      method: 'get', path: '/auth/me', operationId: 'me', summary: 'The caller and its organization', tags: ['auth'], auth: 'any',
      response: obj({ user: userSchema, organization: obj({ id: id(), name: str() }, ['id', 'name']) }, ['user', 'organization']),
      handler: async ({ principal }) => {
        const { user, organization }: { user: User; organization: Organization } = await d.getMe.execute(principal);
        return { user: presentUser(user), organization: { id: organization.id, name: organization.name } };
      },
    },
    {
      method: 'post', path: '/user/api-keys', operationId: 'createApiKey', summary: 'Create an API key (session token only)', tags: ['api keys'], auth: 'session',
      description: 'The full key (`cpk_` + 43 characters) is in `api_key` of this response only; only its SHA-256 is stored. With an API key: 403 `session_required`.',
      body: obj({ name: str({ minLength: 1, maxLength: 100 }) }, ['name'], { additionalProperties: false }),
      response: obj({ id: id(), name: str(), key_prefix: str(), api_key: str(), created_at: dateTime() }, ['id', 'name', 'key_prefix', 'api_key', 'created_at']),
      handler: async ({ principal, body }) => {
        const { apiKey, secret } = await d.createApiKey.execute(principal, body.name);
        return { id: apiKey.id, name: apiKey.name, key_prefix: apiKey.keyPrefix, api_key: secret, created_at: iso(apiKey.createdAt) };
      },
    },
    {
      method: 'get', path: '/user/api-keys', operationId: 'listApiKeys', summary: "The organization's API keys (without secrets)", tags: ['api keys'], auth: 'any',
      response: obj({ api_keys: arr(apiKeySchema) }, ['api_keys']),
      handler: async ({ principal }) => ({ api_keys: (await d.listApiKeys.execute(principal)).map(presentKey) }),
    },
    {
      method: 'delete', path: '/user/api-keys/{api_key_id}', operationId: 'revokeApiKey', summary: 'Revoke an API key', tags: ['api keys'], auth: 'any',
      params: pathParams('api_key_id'),
      response: obj({ id: id(), deleted: { const: true }, revoked_at: dateTime() }, ['id', 'deleted', 'revoked_at']), errors: [404],
      handler: async ({ principal, params }) => {
        const key = await d.revokeApiKey.execute(principal, params.api_key_id);
        return { id: key.id, deleted: true, revoked_at: iso(key.revokedAt!) };
      },
    },
  ]);
}
