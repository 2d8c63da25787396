import { useEffect, useState } from 'preact/hooks';
import { del, get, isMissingEndpoint, post, put, qs } from '../api';
import { ErrorBox, fmtDate, Loading, Pager, Section, useAction, useLoad } from '../ui';

const EVENTS = ['call.started', 'call.ended', 'call.analyzed', 'campaign.started', 'campaign.paused', 'campaign.completed', 'campaign.failed', 'phone_number.sync_failed'];
const BASE = '/organizations/webhooks';

/** Event webhooks (API.md 14): endpoints, their signing secret (shown once), the delivery log and retry. */
export function WebhooksPage() {
  const list = useLoad(() => get<any>(BASE), []);
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<string[]>(['call.ended']);
  const [secret, setSecret] = useState<{ label: string; secret: string } | null>(null);
  const [open, setOpen] = useState<number | null>(null);
  const [editing, setEditing] = useState<number | null>(null);
  const action = useAction();
  const hooks: any[] = list.data?.webhooks ?? list.data?.endpoints ?? [];
  if (isMissingEndpoint(list.error)) {
    return (
      <>
        <h1>Webhooks</h1>
        <ErrorBox error={list.error} what="Event webhooks" />
      </>
    );
  }
  const create = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const r = await post(BASE, { url, events, description: description || undefined });
      setSecret({ label: r.url, secret: r.secret });
      setUrl('');
      setDescription('');
      list.reload();
    });
  };
  return (
    <>
      <h1>Webhooks</h1>
      <p class="muted">Callplane POSTs signed JSON events (Callplane-Signature: HMAC-SHA256) to your endpoints, retrying with backoff until they answer 2xx.</p>
      <Section title="Add an endpoint">
        <form onSubmit={create}>
          <div class="row">
            <div class="field grow">
              <label for="wh-url">URL *</label>
              <input id="wh-url" type="url" required value={url} onInput={(e) => setUrl(e.currentTarget.value)} placeholder="https://example.com/callplane" />
            </div>
            <div class="field grow">
              <label for="wh-desc">Description</label>
              <input id="wh-desc" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
            </div>
          </div>
          <EventChecks idPrefix="wh-ev" events={events} onChange={setEvents} />
          <ErrorBox error={action.error} />
          <button class="primary" type="submit" disabled={action.busy || events.length === 0}>
            Add endpoint
          </button>
        </form>
        {secret ? (
          <div class="notice" role="status">
            <p>
              Signing secret for <strong>{secret.label}</strong>, shown this once:
            </p>
            <input class="secret" readOnly aria-label="Signing secret" value={secret.secret} onFocus={(e) => e.currentTarget.select()} />
            <button type="button" onClick={() => setSecret(null)}>
              Done
            </button>
          </div>
        ) : null}
      </Section>
      <Section title="Endpoints">
        <Loading when={list.loading && !list.data} />
        <ErrorBox error={list.error} />
        {list.data && hooks.length === 0 ? <p class="muted">None yet.</p> : null}
        <ul class="items">
          {hooks.map((h) => (
            <li key={h.id}>
              <div class="row">
                <code>{h.url}</code>
                <span class="muted small">{(h.events ?? []).join(', ')}</span>
                {h.description ? <span class="muted">{h.description}</span> : null}
                <span class="grow" />
                <button type="button" aria-expanded={open === h.id} onClick={() => setOpen(open === h.id ? null : h.id)}>
                  Deliveries
                </button>
                <button type="button" aria-expanded={editing === h.id} onClick={() => setEditing(editing === h.id ? null : h.id)}>
                  Edit
                </button>
                <button type="button" onClick={() => action.run(async () => { const r = await post(`${BASE}/${h.id}/rotate-secret`); setSecret({ label: h.url, secret: r.secret }); })}>
                  Rotate secret
                </button>
                <button type="button" class="danger" onClick={() => confirm(`Delete the endpoint ${h.url}?`) && action.run(async () => (await del(`${BASE}/${h.id}`), list.reload()))}>
                  Delete
                </button>
              </div>
              {editing === h.id ? <EditEndpoint hook={h} onDone={() => (setEditing(null), list.reload())} /> : null}
              {open === h.id ? <Deliveries id={h.id} /> : null}
            </li>
          ))}
        </ul>
      </Section>
    </>
  );
}

function Deliveries({ id }: { id: number }) {
  const [page, setPage] = useState(1);
  const list = useLoad(() => get<any>(`${BASE}/${id}/deliveries${qs({ page, limit: 20 })}`), [id, page]);
  const action = useAction();
  const rows: any[] = list.data?.deliveries ?? [];
  const pending = rows.some((d) => d.status === 'pending');
  // the log follows deliveries still being attempted
  useEffect(() => {
    if (!pending) return;
    const t = setInterval(list.reload, 1500);
    return () => clearInterval(t);
  }, [pending, page]);
  return (
    <div class="deliveries">
      <div class="row">
        <h3>Deliveries</h3>
        <span class="grow" />
        <button type="button" disabled={action.busy} onClick={() => action.run(async () => (await post(`${BASE}/${id}/test`), setPage(1), list.reload()))}>
          Send a test event
        </button>
        <button type="button" onClick={list.reload}>
          Refresh
        </button>
      </div>
      <ErrorBox error={list.error ?? action.error} what="The delivery log" />
      <table>
        <thead>
          <tr>
            <th>Delivery</th>
            <th>Event</th>
            <th>Status</th>
            <th>Attempts</th>
            <th>Last answer</th>
            <th>Next attempt</th>
            <th>
              <span class="sr">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((d) => (
            <tr key={d.id}>
              <td>
                <code>{d.id}</code>
              </td>
              <td>{d.event}</td>
              <td>
                <span class={`badge ${d.status}`}>{d.status}</span>
              </td>
              <td>{d.attempts}</td>
              <td>{d.last_status_code ?? d.last_error ?? '—'}</td>
              <td>{fmtDate(d.next_attempt_at)}</td>
              <td>
                {d.status !== 'delivered' ? (
                  <button type="button" onClick={() => action.run(async () => (await post(`${BASE}/${id}/deliveries/${d.id}/retry`), list.reload()))}>
                    Retry
                  </button>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.data && rows.length === 0 ? <p class="muted">No deliveries yet.</p> : null}
      {list.data?.total_pages ? <Pager page={page} totalPages={list.data.total_pages} total={list.data.total_count} onPage={setPage} /> : null}
    </div>
  );
}

function EventChecks({ idPrefix, events, onChange }: { idPrefix: string; events: string[]; onChange: (e: string[]) => void }) {
  return (
    <fieldset>
      <legend>Events</legend>
      <div class="checks">
        {EVENTS.map((ev) => (
          <span class="field check">
            <input id={`${idPrefix}-${ev}`} type="checkbox" checked={events.includes(ev)} onChange={() => onChange(events.includes(ev) ? events.filter((x) => x !== ev) : [...events, ev])} />
            <label for={`${idPrefix}-${ev}`}>{ev}</label>
          </span>
        ))}
      </div>
    </fieldset>
  );
}

function EditEndpoint({ hook, onDone }: { hook: any; onDone: () => void }) {
  const [url, setUrl] = useState<string>(hook.url);
  const [description, setDescription] = useState<string>(hook.description ?? '');
  const [events, setEvents] = useState<string[]>(hook.events ?? []);
  const action = useAction();
  const p = `wh-${hook.id}`;
  const save = (e: Event) => {
    e.preventDefault();
    void action.run(async () => (await put(`${BASE}/${hook.id}`, { url, events, description: description || null }), onDone()));
  };
  return (
    <form class="account-form" onSubmit={save}>
      <div class="row">
        <div class="field grow">
          <label for={`${p}-url`}>URL</label>
          <input id={`${p}-url`} type="url" required value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
        </div>
        <div class="field grow">
          <label for={`${p}-desc`}>Description</label>
          <input id={`${p}-desc`} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </div>
      </div>
      <EventChecks idPrefix={`${p}-ev`} events={events} onChange={setEvents} />
      <ErrorBox error={action.error} />
      <button class="primary" type="submit" disabled={action.busy || events.length === 0}>
        Save
      </button>
    </form>
  );
}
