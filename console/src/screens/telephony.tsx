import { useState } from 'preact/hooks';
import { del, get, post, put } from '../api';
import { ErrorBox, Loading, Section, useAction, useLoad } from '../ui';
import { AccountForm, CredentialsCheck, type ProviderMeta } from './accounts';

export function TelephonyPage() {
  const meta = useLoad(() => get<{ providers: ProviderMeta[] }>('/organizations/telephony-providers/metadata'), []);
  const list = useLoad(() => get<{ configurations: any[] }>('/organizations/telephony-configs'), []);
  const agents = useLoad(() => get<{ workflows: any[] }>('/workflow?status=active'), []);
  const [editing, setEditing] = useState<number | null>(null);
  const [formKey, setFormKey] = useState(0);
  const action = useAction();
  const providers = meta.data?.providers ?? [];
  const defaultExtra = (v: Record<string, unknown>, set: (k: string, v: unknown) => void) => (
    <div class="field check">
      <input id="tel-default" type="checkbox" checked={Boolean(v.is_default_outbound)} onChange={(e) => set('is_default_outbound', e.currentTarget.checked)} />
      <label for="tel-default">Default for outbound calls</label>
    </div>
  );
  return (
    <>
      <h1>Telephony</h1>
      <p class="muted">Carrier accounts the agents call through, and the phone numbers that reach an agent. The simulator places no real calls.</p>
      <ErrorBox error={meta.error ?? list.error} />
      {providers.length ? (
        <Section title="Add a telephony configuration">
          <AccountForm
            key={formKey}
            idPrefix="tel-new"
            providers={providers}
            extra={defaultExtra}
            onSubmit={async ({ name, config, extra }) => {
              await post('/organizations/telephony-configs', { name, config, is_default_outbound: Boolean(extra.is_default_outbound) });
              setFormKey((k) => k + 1);
              list.reload();
            }}
          />
        </Section>
      ) : null}
      <Section title="Configurations">
        <Loading when={list.loading && !list.data} />
        <ErrorBox error={action.error} />
        {list.data?.configurations.length === 0 ? <p class="muted">None yet.</p> : null}
        <ul class="items">
          {list.data?.configurations.map((c) => (
            <li key={c.id}>
              <div class="row">
                <strong>{c.name}</strong>
                <span class="badge">{c.provider}</span>
                {c.is_default_outbound ? <span class="badge active">default outbound</span> : null}
                <CredentialsCheck check={c.credentials_check} />
                <span class="grow" />
                {!c.is_default_outbound ? (
                  <button type="button" onClick={() => action.run(async () => (await post(`/organizations/telephony-configs/${c.id}/set-default-outbound`), list.reload()))}>
                    Make default
                  </button>
                ) : null}
                <button type="button" onClick={() => setEditing(editing === c.id ? null : c.id)} aria-expanded={editing === c.id}>
                  Edit
                </button>
                <button
                  type="button"
                  class="danger"
                  onClick={() => confirm(`Delete “${c.name}” and its ${c.phone_number_count} numbers?`) && action.run(async () => (await del(`/organizations/telephony-configs/${c.id}`), list.reload()))}
                >
                  Delete
                </button>
              </div>
              {editing === c.id ? (
                <AccountForm
                  idPrefix={`tel-${c.id}`}
                  providers={providers}
                  existing={c}
                  onCancel={() => setEditing(null)}
                  onSubmit={async ({ name, config }) => {
                    await put(`/organizations/telephony-configs/${c.id}`, { name, config });
                    setEditing(null);
                    list.reload();
                  }}
                />
              ) : null}
              <Numbers config={c} agents={agents.data?.workflows ?? []} onChange={list.reload} />
            </li>
          ))}
        </ul>
      </Section>
    </>
  );
}

function SyncWarning({ sync }: { sync: any }) {
  if (!sync || sync.ok) return null;
  return (
    <p class="warn" role="alert">
      ⚠ Saved, but the provider was not updated: {sync.message ?? sync.error ?? 'provider_sync failed'}. Calls to this number may not reach the agent until it is fixed at the provider.
    </p>
  );
}

function Numbers({ config, agents, onChange }: { config: any; agents: any[]; onChange: () => void }) {
  const base = `/organizations/telephony-configs/${config.id}/phone-numbers`;
  const list = useLoad(() => get<{ phone_numbers: any[] }>(base), [config.id, config.phone_number_count]);
  const [address, setAddress] = useState('');
  const [country, setCountry] = useState('');
  const [agent, setAgent] = useState('');
  const [sync, setSync] = useState<any>(null);
  const action = useAction();
  const add = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const r = await post(base, { address, country_code: country || undefined, inbound_workflow_id: agent ? Number(agent) : undefined });
      setSync(r.provider_sync ?? null);
      setAddress('');
      list.reload();
      onChange();
    });
  };
  const bind = (n: any, workflowId: string) =>
    action.run(async () => {
      const r = await put(`${base}/${n.id}`, { inbound_workflow_id: workflowId ? Number(workflowId) : null });
      setSync(r.provider_sync ?? null);
      list.reload();
    });
  const p = `num-${config.id}`;
  return (
    <details class="numbers">
      <summary>Phone numbers ({config.phone_number_count})</summary>
      <SyncWarning sync={sync} />
      <ErrorBox error={list.error ?? action.error} />
      <table>
        <thead>
          <tr>
            <th>Number</th>
            <th>Type</th>
            <th>Inbound agent</th>
            <th>Active</th>
            <th>
              <span class="sr">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {list.data?.phone_numbers.map((n) => (
            <tr key={n.id}>
              <td>
                {n.address_normalized ?? n.address}
                {n.is_default_caller_id ? <span class="badge">caller id</span> : null}
              </td>
              <td>{n.address_type}</td>
              <td>
                <select aria-label={`Inbound agent of ${n.address_normalized ?? n.address}`} value={n.inbound_workflow_id ?? ''} onChange={(e) => bind(n, e.currentTarget.value)}>
                  <option value="">— none —</option>
                  {agents.map((w) => (
                    <option value={w.id}>{w.name}</option>
                  ))}
                  {n.inbound_workflow_id && !agents.some((w) => w.id === n.inbound_workflow_id) ? <option value={n.inbound_workflow_id}>{n.inbound_workflow_name}</option> : null}
                </select>
              </td>
              <td>{n.is_active ? 'yes' : 'no'}</td>
              <td>
                <button type="button" class="danger" onClick={() => confirm('Delete this number?') && action.run(async () => { const r = await del(`${base}/${n.id}`); setSync(r.provider_sync ?? null); list.reload(); onChange(); })}>
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <form class="row" onSubmit={add}>
        <div class="field grow">
          <label for={`${p}-address`}>Number or SIP address</label>
          <input id={`${p}-address`} required value={address} onInput={(e) => setAddress(e.currentTarget.value)} placeholder="+14155550100" />
        </div>
        <div class="field">
          <label for={`${p}-country`}>Country (for numbers without +)</label>
          <input id={`${p}-country`} maxLength={2} size={4} value={country} onInput={(e) => setCountry(e.currentTarget.value.toUpperCase())} placeholder="US" />
        </div>
        <div class="field">
          <label for={`${p}-agent`}>Inbound agent</label>
          <select id={`${p}-agent`} value={agent} onChange={(e) => setAgent(e.currentTarget.value)}>
            <option value="">— none —</option>
            {agents.map((w) => (
              <option value={w.id}>{w.name}</option>
            ))}
          </select>
        </div>
        <button type="submit" disabled={action.busy}>
          Add number
        </button>
      </form>
    </details>
  );
}
