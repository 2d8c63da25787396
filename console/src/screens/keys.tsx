import { useState } from 'preact/hooks';
import { del, get, post } from '../api';
import { ErrorBox, fmtDate, Loading, Section, useAction, useLoad } from '../ui';

export function KeysPage() {
  const keys = useLoad(() => get<{ api_keys: any[] }>('/user/api-keys'), []);
  const [name, setName] = useState('');
  const [created, setCreated] = useState<{ name: string; api_key: string } | null>(null);
  const action = useAction();
  const create = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const r = await post<{ name: string; api_key: string }>('/user/api-keys', { name });
      setCreated(r);
      setName('');
      keys.reload();
    });
  };
  const revoke = (k: any) => {
    if (!confirm(`Revoke the key “${k.name}”? Programs using it stop working at once.`)) return;
    void action.run(async () => {
      await del(`/user/api-keys/${k.id}`);
      keys.reload();
    });
  };
  return (
    <>
      <h1>API keys</h1>
      <Section title="Create a key">
        <form class="row" onSubmit={create}>
          <div class="field grow">
            <label for="key-name">Name</label>
            <input id="key-name" required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </div>
          <button class="primary" type="submit" disabled={action.busy}>
            Create key
          </button>
        </form>
        {created ? (
          <div class="notice" role="status">
            <p>
              The key <strong>{created.name}</strong> is shown this once. Copy it now:
            </p>
            <input class="secret" readOnly aria-label="New API key" value={created.api_key} onFocus={(e) => e.currentTarget.select()} />
            <button type="button" onClick={() => navigator.clipboard?.writeText(created.api_key)}>
              Copy
            </button>{' '}
            <button type="button" onClick={() => setCreated(null)}>
              Done
            </button>
          </div>
        ) : null}
        <ErrorBox error={action.error} />
      </Section>
      <Section title="Keys">
        <Loading when={keys.loading && !keys.data} />
        <ErrorBox error={keys.error} />
        <table>
          <thead>
            <tr>
              <th>Name</th>
              <th>Prefix</th>
              <th>Created</th>
              <th>Last used</th>
              <th>State</th>
              <th>
                <span class="sr">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.data?.api_keys.map((k) => (
              <tr key={k.id}>
                <td>{k.name}</td>
                <td>
                  <code>{k.key_prefix}…</code>
                </td>
                <td>{fmtDate(k.created_at)}</td>
                <td>{fmtDate(k.last_used_at)}</td>
                <td>{k.revoked_at ? `revoked ${fmtDate(k.revoked_at)}` : 'active'}</td>
                <td>
                  {k.revoked_at ? null : (
                    <button type="button" class="danger" onClick={() => revoke(k)}>
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
    </>
  );
}
