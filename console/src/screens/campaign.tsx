import { useEffect, useState } from 'preact/hooks';
import { get, patch, post, qs } from '../api';
import { ErrorBox, fmtDate, fmtSeconds, Loading, Pager, Section, useAction, useLoad } from '../ui';
import { SettingsFields, settingsOf } from './campaign-settings';

const LIVE = new Set(['running', 'paused', 'draft']);

export function CampaignPage({ id }: { id: number }) {
  const c = useLoad(() => get(`/campaign/${id}`), [id]);
  const [runsPage, setRunsPage] = useState(1);
  const runs = useLoad(() => get(`/campaign/${id}/runs${qs({ page: runsPage, limit: 20 })}`), [id, runsPage]);
  const action = useAction();
  const state = c.data?.state;
  // live counters: poll while the campaign can still change
  useEffect(() => {
    if (!state || !LIVE.has(state) || state === 'draft') return;
    const t = setInterval(() => {
      c.reload();
      runs.reload();
    }, 1500);
    return () => clearInterval(t);
  }, [state, runsPage]);
  if (!c.data) {
    return (
      <>
        <Loading when={c.loading} />
        <ErrorBox error={c.error} />
      </>
    );
  }
  const k = c.data;
  const move = (verb: string) =>
    action.run(async () => {
      c.setData(await post(`/campaign/${id}/${verb}`));
      runs.reload();
    });
  const total = k.total_rows ?? 0;
  const done = k.processed_rows ?? 0;
  const pct = total ? Math.round((done / total) * 100) : 0;
  return (
    <>
      <div class="title-row">
        <h1>{k.name}</h1>
        <span class={`badge ${k.state}`} aria-live="polite">
          {k.state}
        </span>
        <span class="muted">
          agent <a href={`/agents/${k.workflow_id}`}>{k.workflow_name ?? `#${k.workflow_id}`}</a>
        </span>
        <span class="grow" />
        {k.state === 'draft' ? (
          <button type="button" class="primary" disabled={action.busy} onClick={() => move('start')}>
            Start
          </button>
        ) : null}
        {k.state === 'running' ? (
          <button type="button" disabled={action.busy} onClick={() => move('pause')}>
            Pause
          </button>
        ) : null}
        {k.state === 'paused' ? (
          <button type="button" class="primary" disabled={action.busy} onClick={() => move('resume')}>
            Resume
          </button>
        ) : null}
        {LIVE.has(k.state) ? (
          <button type="button" class="danger" disabled={action.busy} onClick={() => confirm('Cancel this campaign? Queued contacts are dropped.') && move('cancel')}>
            Cancel
          </button>
        ) : null}
      </div>
      <ErrorBox error={action.error} />
      <Section title="Progress">
        <div class="progress-wrap">
          <progress id="camp-progress" max={Math.max(total, 1)} value={done} aria-label="Contacts done" aria-valuetext={`${done} of ${total} contacts (${pct}%)`} />
          <span>
            {done}/{total} contacts ({pct}%)
          </span>
        </div>
        <dl class="counters">
          <div>
            <dt>Contacts</dt>
            <dd data-counter="total_rows">{k.total_rows ?? '—'}</dd>
          </div>
          <div>
            <dt>Done</dt>
            <dd data-counter="processed_rows">{k.processed_rows}</dd>
          </div>
          <div>
            <dt>Not connected</dt>
            <dd data-counter="failed_rows">{k.failed_rows}</dd>
          </div>
          <div>
            <dt>Calls placed</dt>
            <dd data-counter="executed_count">{k.executed_count ?? '—'}</dd>
          </div>
          <div>
            <dt>Attempts queued</dt>
            <dd data-counter="total_queued_count">{k.total_queued_count ?? '—'}</dd>
          </div>
        </dl>
        <p class="small muted">
          Created {fmtDate(k.created_at)} · started {fmtDate(k.started_at)} · finished {fmtDate(k.completed_at)} · source {k.source_type}
        </p>
      </Section>
      {k.state === 'draft' || k.state === 'paused' ? <Settings campaign={k} onSaved={c.setData} /> : null}
      <Section title="Calls">
        <ErrorBox error={runs.error} />
        <table>
          <thead>
            <tr>
              <th>Run</th>
              <th>Number</th>
              <th>Status</th>
              <th>Disposition</th>
              <th>Attempt</th>
              <th>Duration</th>
            </tr>
          </thead>
          <tbody>
            {runs.data?.runs?.map((r: any) => (
              <tr key={r.id}>
                <td>
                  <a href={`/agents/${r.workflow_id}/runs/${r.id}`}>#{r.id}</a>
                </td>
                <td>{r.initial_context?.phone_number ?? r.initial_context?.called_number}</td>
                <td>{r.status}</td>
                <td>{r.disposition ?? r.gathered_context?.mapped_call_disposition ?? '—'}</td>
                <td>{r.initial_context?.attempt ?? 1}</td>
                <td>{fmtSeconds(r.duration_seconds ?? r.cost_info?.call_duration_seconds)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {runs.data ? <Pager page={runsPage} totalPages={runs.data.total_pages ?? 1} total={runs.data.total_count} onPage={setRunsPage} /> : null}
      </Section>
      <Section title="Log">
        <ol class="log" aria-label="Campaign log">
          {[...(k.logs ?? [])].reverse().map((l: any) => (
            <li class={l.level}>
              <time>{fmtDate(l.ts)}</time> <strong>{l.event}</strong> {l.message}
              {l.details && Object.keys(l.details).length ? <code class="small"> {JSON.stringify(l.details)}</code> : null}
            </li>
          ))}
        </ol>
      </Section>
    </>
  );
}

function Settings({ campaign, onSaved }: { campaign: any; onSaved: (c: any) => void }) {
  const [value, setValue] = useState(settingsOf(campaign));
  const action = useAction();
  const save = (e: Event) => {
    e.preventDefault();
    void action.run(async () => onSaved(await patch(`/campaign/${campaign.id}`, value)));
  };
  return (
    <Section title="Settings">
      <form onSubmit={save}>
        <SettingsFields idPrefix="edit" value={value} onChange={setValue} />
        <ErrorBox error={action.error} />
        <button type="submit" class="primary" disabled={action.busy}>
          Save settings
        </button>
      </form>
    </Section>
  );
}
