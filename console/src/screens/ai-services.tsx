import { useState } from 'preact/hooks';
import { del, get, post, put } from '../api';
import { ErrorBox, fmtDate, Loading, Section, useAction, useLoad } from '../ui';
import { AccountForm, type ProviderMeta } from './accounts';

export function AiServicesPage() {
  const meta = useLoad(() => get<{ providers: ProviderMeta[] }>('/organizations/ai-services/metadata'), []);
  const list = useLoad(() => get<{ ai_services: any[] }>('/organizations/ai-services'), []);
  const [editing, setEditing] = useState<number | null>(null);
  const [formKey, setFormKey] = useState(0);
  const action = useAction();
  const providers = meta.data?.providers ?? [];
  const remove = (s: any) =>
    confirm(`Delete the AI service “${s.name}”?`) &&
    action.run(async () => {
      await del(`/organizations/ai-services/${s.id}`);
      list.reload();
    });
  return (
    <>
      <h1>AI services</h1>
      <p class="muted">The model-provider accounts an agent's language model, speech recognition and voice use. Secrets are stored encrypted and shown masked.</p>
      <ErrorBox error={meta.error ?? list.error} what="AI services" />
      {providers.length ? (
        <Section title="Add an AI service">
          <AccountForm
            key={formKey}
            idPrefix="ai-new"
            providers={providers}
            onSubmit={async ({ name, config }) => {
              await post('/organizations/ai-services', { name, config });
              setFormKey((k) => k + 1);
              list.reload();
            }}
          />
        </Section>
      ) : null}
      <Section title="Services">
        <Loading when={list.loading && !list.data} />
        <ErrorBox error={action.error} />
        {list.data?.ai_services.length === 0 ? <p class="muted">None yet.</p> : null}
        <ul class="items">
          {list.data?.ai_services.map((s) => (
            <li key={s.id}>
              <div class="row">
                <strong>{s.name}</strong>
                <span class="badge">{s.provider}</span>
                <span class="muted">{(s.kinds ?? []).join(', ')}</span>
                <span class="muted small">updated {fmtDate(s.updated_at)}</span>
                <span class="grow" />
                <button type="button" onClick={() => setEditing(editing === s.id ? null : s.id)} aria-expanded={editing === s.id}>
                  Edit
                </button>
                <button type="button" class="danger" onClick={() => remove(s)}>
                  Delete
                </button>
              </div>
              {editing === s.id ? (
                <AccountForm
                  idPrefix={`ai-${s.id}`}
                  providers={providers}
                  existing={s}
                  onCancel={() => setEditing(null)}
                  onSubmit={async ({ name, config }) => {
                    await put(`/organizations/ai-services/${s.id}`, { name, config });
                    setEditing(null);
                    list.reload();
                  }}
                />
              ) : null}
            </li>
          ))}
        </ul>
      </Section>
    </>
  );
}
