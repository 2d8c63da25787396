import { describe, expect, it } from '@jest/globals';
import { MemoryIdentityRepository } from '../../docs/examples/embedding/memory-identity.repository.js';
import { NodeTokenService, ScryptPasswordHasher } from '../../adapters/crypto/node-crypto.js';
import { MemoryRateLimiter } from '../../adapters/rate-limit/memory-rate-limiter.js';
import { CreateApiKey } from './api-keys.use-case.js';
import { Authenticate } from './authenticate.use-case.js';
import { LogIn } from './log-in.use-case.js';
import { SessionIssuer } from './session-issuer.js';
import { SignUp } from './sign-up.use-case.js';

function setup(policy: 'first-user' | 'open' | 'closed' = 'open') {
  let now = new Date('2026-03-01T10:00:00Z');
  const clock = { now: () => now };
  const repo = new MemoryIdentityRepository();
  const tokens = new NodeTokenService();
  const passwords = new ScryptPasswordHasher({ N: 1024, r: 8, p: 1, keylen: 32 });
  const sessions = new SessionIssuer(repo, tokens, clock, 3_600_000);
  const limiters = { perEmail: new MemoryRateLimiter(3, 60_000), perAddress: new MemoryRateLimiter(5, 60_000) };
  return {
    advance: (ms: number) => (now = new Date(now.getTime() + ms)),
    signUp: new SignUp(repo, passwords, sessions, clock, policy),
    logIn: new LogIn(repo, passwords, sessions, limiters, clock),
    authenticate: new Authenticate(repo, tokens, clock),
    createApiKey: new CreateApiKey(repo, tokens, clock),
    repo,
  };
}

describe('identity use cases', () => {
  it('first-user signup is open only while no user exists; closed refuses', async () => {
    const s = setup('first-user');
    await s.signUp.execute({ email: 'a@example.com', password: 'longenough' });
    await expect(s.signUp.execute({ email: 'b@example.com', password: 'longenough' })).rejects.toMatchObject({ code: 'signup_disabled', kind: 'forbidden' });
    await expect(setup('closed').signUp.execute({ email: 'a@example.com', password: 'longenough' })).rejects.toMatchObject({ code: 'signup_disabled' });
  });

  it('refuses short passwords', async () => {
    await expect(setup().signUp.execute({ email: 'a@example.com', password: 'short' })).rejects.toMatchObject({ code: 'password_too_short' });
  });

  it('expires session tokens after their lifetime', async () => {
    const s = setup();
    const { token } = await s.signUp.execute({ email: 'a@example.com', password: 'longenough' });
    await expect(s.authenticate.execute({ bearerToken: token })).resolves.toMatchObject({ via: 'session' });
    s.advance(3_600_000);
    await expect(s.authenticate.execute({ bearerToken: token })).rejects.toMatchObject({ code: 'invalid_credentials' });
  });

  it('throttles failures per email and per client address, and a success clears the email count', async () => {
    const s = setup();
    await s.signUp.execute({ email: 'a@example.com', password: 'longenough' });
    for (let i = 0; i < 2; i++) await expect(s.logIn.execute({ email: 'a@example.com', password: 'nope', clientAddress: '10.0.0.1' })).rejects.toMatchObject({ code: 'invalid_credentials' });
    await s.logIn.execute({ email: 'a@example.com', password: 'longenough', clientAddress: '10.0.0.1' });
    for (let i = 0; i < 3; i++) await expect(s.logIn.execute({ email: 'A@example.com', password: 'nope', clientAddress: `10.0.1.${i}` })).rejects.toMatchObject({ code: 'invalid_credentials' });
    await expect(s.logIn.execute({ email: 'a@example.com', password: 'longenough', clientAddress: '10.0.2.1' })).rejects.toMatchObject({ code: 'rate_limited' });
    // per address: 5 failures on different emails from one address
    for (let i = 0; i < 5; i++) await expect(s.logIn.execute({ email: `x${i}@example.com`, password: 'nope', clientAddress: '10.9.9.9' })).rejects.toMatchObject({ kind: 'unauthenticated' });
    const limited = await s.logIn.execute({ email: 'y@example.com', password: 'nope', clientAddress: '10.9.9.9' }).catch((e) => e);
    expect(limited).toMatchObject({ code: 'rate_limited', retryAfterSeconds: 60 });
    s.advance(60_001);
    await expect(s.logIn.execute({ email: 'a@example.com', password: 'longenough', clientAddress: '10.9.9.9' })).resolves.toMatchObject({ user: { email: 'a@example.com' } });
  });

  it('records key use at most once a minute', async () => {
    const s = setup();
    const { token } = await s.signUp.execute({ email: 'a@example.com', password: 'longenough' });
    const principal = await s.authenticate.execute({ bearerToken: token });
    const { apiKey, secret } = await s.createApiKey.execute(principal, 'k');
    await s.authenticate.execute({ apiKey: secret });
    const first = (await s.repo.listApiKeys(apiKey.organizationId))[0]!.lastUsedAt;
    expect(first).not.toBeNull();
    s.advance(30_000);
    await s.authenticate.execute({ apiKey: secret });
    expect((await s.repo.listApiKeys(apiKey.organizationId))[0]!.lastUsedAt).toEqual(first);
    s.advance(31_000);
    await s.authenticate.execute({ apiKey: secret });
    expect((await s.repo.listApiKeys(apiKey.organizationId))[0]!.lastUsedAt!.getTime()).toBeGreaterThan(first!.getTime());
  });
});
