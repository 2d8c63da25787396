import type { Container } from 'inversify';
import { CreateApiKey, GetMe, ListApiKeys, RevokeApiKey } from '../../core/identity/api-keys.use-case.js';
import { Authenticate, LogOut } from '../../core/identity/authenticate.use-case.js';
import { LogIn } from '../../core/identity/log-in.use-case.js';
import { SessionIssuer } from '../../core/identity/session-issuer.js';
import { CreateUser, SignUp } from '../../core/identity/sign-up.use-case.js';
import { Clock } from '../../core/ports/clock.port.js';
import { PasswordHasher, TokenService } from '../../core/ports/crypto.port.js';
import { IdentityRepository } from '../../core/ports/identity.repository.port.js';
import { MemoryRateLimiter } from '../../adapters/rate-limit/memory-rate-limiter.js';
import { identityRoutes } from '../../http/routes/identity.routes.js';
import type { Settings } from '../settings.js';
import { HttpRoutesToken, SettingsToken } from '../tokens.js';

/** Organizations, users, sessions, API keys: use cases and routes (the repository comes from the storage module). */
export function identityModule(c: Container): void {
  c.bind(SessionIssuer).toResolvedValue(
    (r: IdentityRepository, t: TokenService, clock: Clock, s: Settings) => new SessionIssuer(r, t, clock, s.tokenTtlHours * 3_600_000),
    [IdentityRepository, TokenService, Clock, SettingsToken],
  ).inSingletonScope();
  c.bind(SignUp).toResolvedValue(
    (r: IdentityRepository, p: PasswordHasher, si: SessionIssuer, clock: Clock, s: Settings) => new SignUp(r, p, si, clock, s.signup),
    [IdentityRepository, PasswordHasher, SessionIssuer, Clock, SettingsToken],
  ).inSingletonScope();
  c.bind(CreateUser).toResolvedValue((r: IdentityRepository, p: PasswordHasher, clock: Clock) => new CreateUser(r, p, clock), [IdentityRepository, PasswordHasher, Clock]).inSingletonScope();
  c.bind(LogIn).toResolvedValue(
    (r: IdentityRepository, p: PasswordHasher, si: SessionIssuer, clock: Clock) =>
      // 5 failures per email and 30 per client address within 15 minutes
      new LogIn(r, p, si, { perEmail: new MemoryRateLimiter(5), perAddress: new MemoryRateLimiter(30) }, clock),
    [IdentityRepository, PasswordHasher, SessionIssuer, Clock],
  ).inSingletonScope();
  c.bind(Authenticate).toResolvedValue((r: IdentityRepository, t: TokenService, clock: Clock) => new Authenticate(r, t, clock), [IdentityRepository, TokenService, Clock]).inSingletonScope();
  c.bind(LogOut).toResolvedValue((r: IdentityRepository, clock: Clock) => new LogOut(r, clock), [IdentityRepository, Clock]).inSingletonScope();
  c.bind(GetMe).toResolvedValue((r: IdentityRepository) => new GetMe(r), [IdentityRepository]).inSingletonScope();
  c.bind(CreateApiKey).toResolvedValue((r: IdentityRepository, t: TokenService, clock: Clock) => new CreateApiKey(r, t, clock), [IdentityRepository, TokenService, Clock]).inSingletonScope();
  c.bind(ListApiKeys).toResolvedValue((r: IdentityRepository) => new ListApiKeys(r), [IdentityRepository]).inSingletonScope();
  c.bind(RevokeApiKey).toResolvedValue((r: IdentityRepository, clock: Clock) => new RevokeApiKey(r, clock), [IdentityRepository, Clock]).inSingletonScope();
  c.bind(HttpRoutesToken).toResolvedValue(
    (signUp: SignUp, logIn: LogIn, logOut: LogOut, getMe: GetMe, createApiKey: CreateApiKey, listApiKeys: ListApiKeys, revokeApiKey: RevokeApiKey) =>
      identityRoutes({ signUp, logIn, logOut, getMe, createApiKey, listApiKeys, revokeApiKey }),
    [SignUp, LogIn, LogOut, GetMe, CreateApiKey, ListApiKeys, RevokeApiKey],
  );
}
