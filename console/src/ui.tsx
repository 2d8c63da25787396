import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, isMissingEndpoint } from './api';

/** Loads with `fn` whenever `deps` change; `reload` loads again (keeping the old data on screen meanwhile). */
export function useLoad<T>(fn: () => Promise<T>, deps: unknown[]) {
  const [state, setState] = useState<{ data: T | null; error: unknown; loading: boolean }>({ data: null, error: null, loading: true });
  const seq = useRef(0);
  const reload = useCallback(() => {
    const mine = ++seq.current;
    setState((s) => ({ ...s, loading: true }));
    fn().then(
      (data) => mine === seq.current && setState({ data, error: null, loading: false }),
      (error) => mine === seq.current && setState((s) => ({ data: s.data, error, loading: false })),
    );
  }, deps);
  useEffect(() => {
    reload();
  }, [reload]);
  return { ...state, reload, setData: (data: T) => setState({ data, error: null, loading: false }) };
}

/** Runs an action, keeping its error and a busy flag for the button that started it. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = async <T,>(fn: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(null);
    try {
      return await fn();
    } catch (e) {
      setError(e);
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run, setError };
}

export function ErrorBox({ error, what }: { error: unknown; what?: string }) {
  if (!error) return null;
  if (isMissingEndpoint(error)) {
    return (
      <p class="notice" role="status">
        {what ?? 'This feature'} is not available on this server (its API answered 404): this build of Callplane does not include it yet.
      </p>
    );
  }
  const e = error as ApiError;
  return (
    <div class="error" role="alert">
      {e instanceof ApiError ? (
        <>
          {e.issues.length > 0 ? (
            <ul>
              {e.issues.map((i) => (
                <li>
                  <code>{i.loc.join('.')}</code>: {i.msg}
                </li>
              ))}
            </ul>
          ) : (
            e.message
          )}{' '}
          <span class="muted">({e.code})</span>
        </>
      ) : (
        String((e as Error)?.message ?? e)
      )}
    </div>
  );
}

export function Loading({ when }: { when: boolean }) {
  return when ? <p class="muted" aria-live="polite">Loading…</p> : null;
}

export function Pager({ page, totalPages, total, onPage }: { page: number; totalPages: number; total?: number; onPage: (p: number) => void }) {
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        ← Previous
      </button>
      <span>
        Page {page} of {Math.max(totalPages, 1)}
        {total !== undefined ? ` · ${total} in all` : ''}
      </span>
      <button type="button" disabled={page >= totalPages} onClick={() => onPage(page + 1)}>
        Next →
      </button>
    </nav>
  );
}

export function Section({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section class="card">
      <header class="card-head">
        <h2>{title}</h2>
        {actions}
      </header>
      {children}
    </section>
  );
}

export const fmtDate = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');
export const fmtSeconds = (s: number | null | undefined) => (s == null ? '—' : s < 60 ? `${s.toFixed(s % 1 ? 1 : 0)} s` : `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`);
export const fmtUsd = (n: number | null | undefined) => (n == null ? '—' : `$${n.toFixed(4)}`);
export const fmtMs = (ms: number) => {
  const s = Math.max(0, Math.floor(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
};

export interface ProviderField {
  name: string;
  label: string;
  type: 'string' | 'password' | 'url' | 'boolean' | 'string_array' | 'textarea';
  /** The JSON type the value is sent as (an integer in a text widget goes as a number). */
  value_type: 'string' | 'integer' | 'boolean' | 'string_array';
  required: boolean;
  sensitive: boolean;
  description: string;
  placeholder: string;
}

/**
 * A form generated from a provider's metadata fields. Sensitive fields are password inputs; their stored
 * values arrive masked and are sent back unchanged when not edited, which the API reads as "keep the secret".
 */
export function ProviderFields({ fields, values, onChange, idPrefix }: { fields: ProviderField[]; values: Record<string, unknown>; onChange: (v: Record<string, unknown>) => void; idPrefix: string }) {
  const set = (name: string, value: unknown) => onChange({ ...values, [name]: value });
  return (
    <>
      {fields.map((f) => {
        const id = `${idPrefix}-${f.name}`;
        const hint = f.description ? <small id={`${id}-hint`}>{f.description}</small> : null;
        const common = { id, name: f.name, required: f.required, 'aria-describedby': f.description ? `${id}-hint` : undefined, placeholder: f.placeholder || undefined };
        if (f.type === 'boolean') {
          return (
            <div class="field check" key={f.name}>
              <input type="checkbox" {...common} required={false} checked={Boolean(values[f.name])} onChange={(e) => set(f.name, e.currentTarget.checked)} />
              <label for={id}>{f.label}</label>
              {hint}
            </div>
          );
        }
        const value = values[f.name];
        return (
          <div class="field" key={f.name}>
            <label for={id}>
              {f.label}
              {f.required ? ' *' : ''}
            </label>
            {f.type === 'textarea' || f.type === 'string_array' ? (
              <textarea
                {...common}
                rows={f.type === 'string_array' ? 3 : 5}
                value={Array.isArray(value) ? value.join('\n') : String(value ?? '')}
                onInput={(e) => set(f.name, f.type === 'string_array' ? e.currentTarget.value.split('\n').map((s) => s.trim()).filter(Boolean) : e.currentTarget.value)}
              />
            ) : (
              <input
                {...common}
                type={(f.sensitive || f.type === 'password' ? 'password' : f.type === 'url' ? 'url' : f.value_type === 'integer' ? 'number' : 'text') as 'text'}
                autocomplete={f.sensitive || f.type === 'password' ? 'new-password' : 'off'}
                value={String(value ?? '')}
                onInput={(e) => set(f.name, e.currentTarget.value)}
              />
            )}
            {hint}
          </div>
        );
      })}
    </>
  );
}

/**
 * Only the fields worth sending: empty optional values are left out so the server keeps its defaults. Integer
 * fields (`value_type`) typed as text go as numbers; anything that is not one is sent as typed, for the server's 422.
 */
export function configFrom(fields: ProviderField[], values: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    const v = values[f.name];
    if (v === undefined || v === '' || (Array.isArray(v) && v.length === 0 && !f.required)) continue;
    out[f.name] = f.value_type === 'integer' && typeof v === 'string' && /^\s*-?\d+\s*$/.test(v) ? Number(v) : v;
  }
  return out;
}
