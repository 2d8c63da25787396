import { useState } from 'preact/hooks';
import { get, ownUrl, post, qs, upload } from '../api';
import { navigate } from '../router';
import { ErrorBox, fmtDate, Loading, Section, useAction, useLoad } from '../ui';
import { DEFAULT_SETTINGS, SettingsFields } from './campaign-settings';

export function CampaignsPage() {
  const [state, setState] = useState('');
  const list = useLoad(() => get<{ campaigns: any[] }>(`/campaign${qs({ state })}`), [state]);
  const [creating, setCreating] = useState(false);
  return (
    <>
      <div class="title-row">
        <h1>Campaigns</h1>
        <span class="grow" />
        <button type="button" class="primary" onClick={() => setCreating(!creating)} aria-expanded={creating}>
          New campaign
        </button>
      </div>
      {creating ? <NewCampaign /> : null}
      <Section
        title="Your campaigns"
        actions={
          <label>
            State{' '}
            <select value={state} onChange={(e) => setState(e.currentTarget.value)}>
              <option value="">all</option>
              {['draft', 'running', 'paused', 'completed', 'failed', 'cancelled'].map((s) => (
                <option>{s}</option>
              ))}
            </select>
          </label>
        }
      >
        <Loading when={list.loading && !list.data} />
        <ErrorBox error={list.error} />
        {list.data?.campaigns.length === 0 ? <p class="muted">No campaigns yet.</p> : null}
        <table>
          <thead>
            <tr>
              <th>Name</th>
              <th>Agent</th>
              <th>State</th>
              <th>Progress</th>
              <th>Created</th>
            </tr>
          </thead>
          <tbody>
            {list.data?.campaigns.map((c) => (
              <tr key={c.id}>
                <td>
                  <a href={`/campaigns/${c.id}`}>{c.name}</a>
                </td>
                <td>{c.workflow_name}</td>
                <td>
                  <span class={`badge ${c.state}`}>{c.state}</span>
                </td>
                <td>
                  {c.processed_rows}/{c.total_rows ?? '?'}
                </td>
                <td>{fmtDate(c.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
    </>
  );
}

function NewCampaign() {
  const agents = useLoad(() => get<{ workflows: any[] }>('/workflow?status=active'), []);
  const configs = useLoad(() => get<{ configurations: any[] }>('/organizations/telephony-configs'), []);
  const [name, setName] = useState('');
  const [workflow, setWorkflow] = useState('');
  const [config, setConfig] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [progress, setProgress] = useState<number | null>(null);
  const [settings, setSettings] = useState(DEFAULT_SETTINGS);
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    if (!file) return;
    void action.run(async () => {
      setProgress(0);
      const presigned = await post<{ upload_url: string; file_key: string }>('/s3/presigned-upload-url', { file_name: file.name, file_size: file.size, content_type: 'text/csv' });
      await upload(ownUrl(presigned.upload_url), file, setProgress);
      const c = await post<{ id: number }>('/campaign/create', {
        name,
        workflow_id: Number(workflow),
        telephony_configuration_id: config ? Number(config) : undefined,
        source_type: 'csv',
        source_id: presigned.file_key,
        ...settings,
        schedule_config: settings.schedule_config ?? undefined,
      });
      navigate(`/campaigns/${c.id}`);
    });
  };
  return (
    <Section title="New campaign">
      <form onSubmit={submit}>
        <div class="grid3">
          <div class="field">
            <label for="camp-name">Name *</label>
            <input id="camp-name" required maxLength={255} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </div>
          <div class="field">
            <label for="camp-agent">Agent *</label>
            <select id="camp-agent" required value={workflow} onChange={(e) => setWorkflow(e.currentTarget.value)}>
              <option value="">— pick an agent —</option>
              {agents.data?.workflows.map((w) => (
                <option value={w.id}>{w.name}</option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for="camp-config">Telephony</label>
            <select id="camp-config" value={config} onChange={(e) => setConfig(e.currentTarget.value)}>
              <option value="">the default outbound configuration</option>
              {configs.data?.configurations.map((c) => (
                <option value={c.id}>
                  {c.name} ({c.provider})
                </option>
              ))}
            </select>
          </div>
        </div>
        <div class="field">
          <label for="camp-file">Contacts (CSV with a phone_number column, up to 10 MB) *</label>
          <input id="camp-file" type="file" accept=".csv,text/csv" required onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />
        </div>
        {progress !== null ? (
          <div class="field">
            <label for="camp-upload">Upload</label>
            <progress id="camp-upload" max={1} value={progress} aria-valuetext={`${Math.round(progress * 100)}%`} />
            <span class="small">{Math.round(progress * 100)}%</span>
          </div>
        ) : null}
        <SettingsFields idPrefix="camp" value={settings} onChange={setSettings} />
        <ErrorBox error={action.error} />
        <button class="primary" type="submit" disabled={action.busy || !file}>
          Upload and create
        </button>
      </form>
    </Section>
  );
}
