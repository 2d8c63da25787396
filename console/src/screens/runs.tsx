import { useState } from 'preact/hooks';
import { download, get, qs } from '../api';
import { ErrorBox, fmtDate, fmtSeconds, fmtUsd, Loading, Pager, Section, useAction, useLoad } from '../ui';

interface Filters {
  start_date: string;
  end_date: string;
  workflowId: string;
  campaignId: string;
  runId: string;
  direction: '' | 'inbound' | 'outbound';
  dispositions: string;
  number: string;
  minDuration: string;
  maxDuration: string;
}

const EMPTY: Filters = { start_date: '', end_date: '', workflowId: '', campaignId: '', runId: '', direction: '', dispositions: '', number: '', minDuration: '', maxDuration: '' };

/** The usage API's `filters` array from the form (only the filled-in parts). */
export function filtersParam(f: Filters): unknown[] | undefined {
  const out: unknown[] = [];
  if (f.workflowId) out.push({ attribute: 'workflowId', type: 'number', value: { value: Number(f.workflowId) } });
  if (f.campaignId) out.push({ attribute: 'campaignId', type: 'number', value: { value: Number(f.campaignId) } });
  if (f.runId) out.push({ attribute: 'runId', type: 'number', value: { value: Number(f.runId) } });
  if (f.direction) out.push({ attribute: 'callDirection', type: 'radio', value: { value: f.direction } });
  const codes = f.dispositions.split(',').map((s) => s.trim()).filter(Boolean);
  if (codes.length) out.push({ attribute: 'dispositionCode', type: 'multiSelect', value: { codes } });
  if (f.number) out.push({ attribute: f.direction === 'inbound' ? 'callerNumber' : 'calledNumber', type: 'text', value: { value: f.number } });
  if (f.minDuration || f.maxDuration) {
    out.push({ attribute: 'duration', type: 'numberRange', value: { ...(f.minDuration ? { min: Number(f.minDuration) } : {}), ...(f.maxDuration ? { max: Number(f.maxDuration) } : {}) } });
  }
  return out.length ? out : undefined;
}

const PAGE = 25;

export function RunsPage() {
  const [form, setForm] = useState<Filters>(EMPTY);
  const [applied, setApplied] = useState<Filters>(EMPTY);
  const [page, setPage] = useState(1);
  const agents = useLoad(() => get<{ workflows: any[] }>('/workflow'), []);
  const query = { start_date: applied.start_date || undefined, end_date: applied.end_date || undefined, filters: filtersParam(applied) };
  const runs = useLoad(() => get(`/organizations/usage/runs${qs({ ...query, page, limit: PAGE })}`), [JSON.stringify(applied), page]);
  const exporter = useAction();
  const set = (k: keyof Filters) => (e: Event) => setForm({ ...form, [k]: (e.currentTarget as HTMLInputElement).value });
  const apply = (e: Event) => {
    e.preventDefault();
    setPage(1);
    setApplied(form);
  };
  const d = runs.data;
  return (
    <>
      <h1>Runs & usage</h1>
      <Section title="Filters">
        <form onSubmit={apply} class="filters">
          <div class="field">
            <label for="f-from">From</label>
            <input id="f-from" type="date" value={form.start_date} onInput={set('start_date')} />
          </div>
          <div class="field">
            <label for="f-to">To</label>
            <input id="f-to" type="date" value={form.end_date} onInput={set('end_date')} />
          </div>
          <div class="field">
            <label for="f-agent">Agent</label>
            <select id="f-agent" value={form.workflowId} onChange={set('workflowId')}>
              <option value="">any</option>
              {agents.data?.workflows.map((w) => (
                <option value={w.id}>{w.name}</option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for="f-campaign">Campaign id</label>
            <input id="f-campaign" type="number" min="1" value={form.campaignId} onInput={set('campaignId')} />
          </div>
          <div class="field">
            <label for="f-run">Run id</label>
            <input id="f-run" type="number" min="1" value={form.runId} onInput={set('runId')} />
          </div>
          <div class="field">
            <label for="f-direction">Direction</label>
            <select id="f-direction" value={form.direction} onChange={set('direction')}>
              <option value="">any</option>
              <option value="outbound">outbound</option>
              <option value="inbound">inbound</option>
            </select>
          </div>
          <div class="field">
            <label for="f-disp">Dispositions (comma separated)</label>
            <input id="f-disp" value={form.dispositions} onInput={set('dispositions')} placeholder="busy, no_answer" />
          </div>
          <div class="field">
            <label for="f-number">Number contains</label>
            <input id="f-number" value={form.number} onInput={set('number')} />
          </div>
          <div class="field">
            <label for="f-min">Duration from (s)</label>
            <input id="f-min" type="number" min="0" value={form.minDuration} onInput={set('minDuration')} />
          </div>
          <div class="field">
            <label for="f-max">Duration to (s)</label>
            <input id="f-max" type="number" min="0" value={form.maxDuration} onInput={set('maxDuration')} />
          </div>
          <div class="row span-all">
            <button type="submit" class="primary">
              Apply
            </button>
            <button type="button" onClick={() => (setForm(EMPTY), setApplied(EMPTY), setPage(1))}>
              Clear
            </button>
            <button type="button" disabled={exporter.busy} onClick={() => exporter.run(() => download(`/organizations/usage/runs.csv${qs(query)}`, 'callplane-usage.csv'))}>
              Export CSV
            </button>
          </div>
        </form>
        <ErrorBox error={exporter.error} />
      </Section>
      <Section title="Usage">
        <dl class="counters" aria-live="polite">
          <div>
            <dt>Runs</dt>
            <dd data-total="count">{d?.total_count ?? '—'}</dd>
          </div>
          <div>
            <dt>Talk time</dt>
            <dd>{fmtSeconds(d?.total_duration_seconds)}</dd>
          </div>
          <div>
            <dt>Model tokens</dt>
            <dd>{d?.total_service_tokens ?? '—'}</dd>
          </div>
          <div>
            <dt>Charge</dt>
            <dd>{fmtUsd(d?.total_charge_usd ?? d?.runs?.reduce?.((s: number, r: any) => s + (r.charge_usd ?? 0), 0))}</dd>
          </div>
        </dl>
        {d?.total_charge_usd === undefined && d ? <p class="small muted">Charge shown for this page.</p> : null}
      </Section>
      <Section title="Runs">
        <Loading when={runs.loading && !d} />
        <ErrorBox error={runs.error} />
        <table>
          <thead>
            <tr>
              <th>Run</th>
              <th>Agent</th>
              <th>Direction</th>
              <th>Number</th>
              <th>Disposition</th>
              <th>Duration</th>
              <th>Tokens</th>
              <th>Charge</th>
              <th>Created</th>
            </tr>
          </thead>
          <tbody>
            {d?.runs.map((r: any) => (
              <tr key={r.id}>
                <td>
                  <a href={`/agents/${r.workflow_id}/runs/${r.id}`}>#{r.id}</a>
                </td>
                <td>{r.workflow_name}</td>
                <td>{r.call_type}</td>
                <td>{r.phone_number ?? '—'}</td>
                <td>{r.disposition ?? '—'}</td>
                <td>{fmtSeconds(r.call_duration_seconds)}</td>
                <td>{r.service_token_usage}</td>
                <td>{fmtUsd(r.charge_usd)}</td>
                <td>{fmtDate(r.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {d ? <Pager page={page} totalPages={d.total_pages} total={d.total_count} onPage={setPage} /> : null}
      </Section>
    </>
  );
}
