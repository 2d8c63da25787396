import { useState } from 'preact/hooks';
import { ApiError, post, session } from '../api';
import { ErrorBox, useAction } from '../ui';

export function LoginPage() {
  const [mode, setMode] = useState<'login' | 'signup'>('login');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [org, setOrg] = useState('');
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const body = mode === 'login' ? { email, password } : { email, password, organization_name: org || undefined };
      const r = await post<{ token: string }>(mode === 'login' ? '/auth/login' : '/auth/signup', body);
      session.set(r.token);
    });
  };
  const signupClosed = action.error instanceof ApiError && action.error.code === 'signup_disabled';
  return (
    <main id="main" class="login">
      <form class="card" onSubmit={submit} aria-labelledby="login-title">
        <h1 id="login-title">{mode === 'login' ? 'Sign in to Callplane' : 'Create your account'}</h1>
        <div class="field">
          <label for="email">Email</label>
          <input id="email" type="email" autocomplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="password">Password</label>
          <input id="password" type="password" autocomplete={mode === 'login' ? 'current-password' : 'new-password'} required minLength={mode === 'signup' ? 8 : undefined} value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        </div>
        {mode === 'signup' ? (
          <div class="field">
            <label for="org">Organization name</label>
            <input id="org" value={org} onInput={(e) => setOrg(e.currentTarget.value)} />
          </div>
        ) : null}
        <ErrorBox error={action.error} />
        {signupClosed ? <p class="muted">Sign-up is closed on this server: ask an operator for an account (callplane users create).</p> : null}
        <div class="row">
          <button class="primary" type="submit" disabled={action.busy}>
            {mode === 'login' ? 'Sign in' : 'Sign up'}
          </button>
          <button type="button" class="link" onClick={() => (setMode(mode === 'login' ? 'signup' : 'login'), action.setError(null))}>
            {mode === 'login' ? 'New here? Create an account' : 'I have an account'}
          </button>
        </div>
      </form>
    </main>
  );
}
