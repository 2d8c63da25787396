import { useState } from 'preact/hooks';
import { configFrom, ErrorBox, type ProviderField, ProviderFields, useAction } from '../ui';

export interface ProviderMeta {
  provider: string;
  display_name: string;
  docs_url: string;
  kinds?: string[];
  fields: ProviderField[];
}

/**
 * Create or edit a provider account (telephony configuration or AI service) with a form generated from its
 * provider's metadata. Editing starts from the stored credentials, sensitive ones masked: sent back unchanged,
 * the server keeps the stored secret.
 */
export function AccountForm(props: {
  idPrefix: string;
  providers: ProviderMeta[];
  existing?: { name: string; provider: string; credentials: Record<string, unknown> };
  extra?: (values: Record<string, unknown>, set: (k: string, v: unknown) => void) => preact.ComponentChildren;
  onSubmit: (body: { name: string; config: Record<string, unknown>; extra: Record<string, unknown> }) => Promise<void>;
  onCancel?: () => void;
}) {
  const [provider, setProvider] = useState(props.existing?.provider ?? props.providers[0]?.provider ?? '');
  const [name, setName] = useState(props.existing?.name ?? '');
  const [values, setValues] = useState<Record<string, unknown>>(props.existing?.credentials ?? {});
  const [extra, setExtra] = useState<Record<string, unknown>>({});
  const action = useAction();
  const meta = props.providers.find((p) => p.provider === provider);
  const submit = (e: Event) => {
    e.preventDefault();
    if (!meta) return;
    const config = configFrom(meta.fields, values);
    void action.run(() => props.onSubmit({ name, config: { provider, ...config }, extra }));
  };
  const p = props.idPrefix;
  return (
    <form onSubmit={submit} class="account-form">
      <div class="row">
        <div class="field">
          <label for={`${p}-provider`}>Provider</label>
          <select id={`${p}-provider`} value={provider} disabled={Boolean(props.existing)} onChange={(e) => (setProvider(e.currentTarget.value), setValues({}))}>
            {props.providers.map((m) => (
              <option value={m.provider}>{m.display_name}</option>
            ))}
          </select>
        </div>
        <div class="field grow">
          <label for={`${p}-name`}>Name *</label>
          <input id={`${p}-name`} required maxLength={64} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </div>
      </div>
      {meta?.docs_url ? (
        <p class="small muted">
          {meta.kinds ? `Offers ${meta.kinds.join(', ')}. ` : ''}
          Provider documentation: <a href={meta.docs_url} target="_blank" rel="noreferrer noopener">{meta.docs_url}</a>
        </p>
      ) : null}
      {meta ? <ProviderFields key={provider} idPrefix={`${p}-f`} fields={meta.fields} values={values} onChange={setValues} /> : null}
      {props.extra?.(extra, (k, v) => setExtra({ ...extra, [k]: v }))}
      <ErrorBox error={action.error} />
      <div class="row">
        <button class="primary" type="submit" disabled={action.busy || !meta}>
          {props.existing ? 'Save' : 'Create'}
        </button>
        {props.onCancel ? (
          <button type="button" onClick={props.onCancel}>
            Cancel
          </button>
        ) : null}
      </div>
    </form>
  );
}

export function CredentialsCheck({ check }: { check: { ok: boolean; message?: string; checked_at?: string } | null | undefined }) {
  if (!check) return <span class="muted">not checked</span>;
  return check.ok ? <span class="ok">✓ credentials work</span> : <span class="warn">⚠ {check.message || 'credentials check failed'}</span>;
}
