import { useEffect, useState } from 'preact/hooks';
import { ApiError, get, put, qs } from '../api';
import { ErrorBox, fmtDate, fmtSeconds, Loading, Pager, Section, useAction, useLoad } from '../ui';
import { ChatPanel } from './chat';
import { ConfigForm } from './agent-config';
import { type Definition, type GEdge, type GNode, GraphView } from './graph';

/** 422 issues under body.workflow_definition mapped to `node:<id>` / `edge:<id>` (and `other` for the rest). */
export function issuesByElement(err: unknown, def: Definition): Map<string, string[]> {
  const out = new Map<string, string[]>();
  if (!(err instanceof ApiError)) return out;
  for (const i of err.issues) {
    const loc = i.loc;
    const at = loc.indexOf('workflow_definition');
    let key = 'other';
    if (at !== -1 && (loc[at + 1] === 'nodes' || loc[at + 1] === 'edges') && typeof loc[at + 2] === 'number') {
      const list = loc[at + 1] === 'nodes' ? def.nodes : def.edges;
      const el = list[loc[at + 2] as number];
      if (el) key = `${loc[at + 1] === 'nodes' ? 'node' : 'edge'}:${el.id}`;
    }
    const rest = at === -1 ? loc.join('.') : loc.slice(at + 3).join('.');
    out.set(key, [...(out.get(key) ?? []), rest ? `${rest}: ${i.msg}` : i.msg]);
  }
  return out;
}

type Tab = 'graph' | 'config' | 'versions' | 'runs';

export function AgentPage({ id }: { id: number }) {
  const wf = useLoad(() => get(`/workflow/${id}`), [id]);
  const [draft, setDraft] = useState<Definition | null>(null);
  const [selected, setSelected] = useState<string | null>(null);
  const [current, setCurrent] = useState<string | null>(null);
  const [tab, setTab] = useState<Tab>('graph');
  const [saveError, setSaveError] = useState<unknown>(null);
  const action = useAction();
  useEffect(() => {
    if (wf.data && !draft) setDraft(structuredClone(wf.data.workflow_definition));
  }, [wf.data]);
  if (!wf.data || !draft) {
    return (
      <>
        <Loading when={wf.loading} />
        <ErrorBox error={wf.error} />
      </>
    );
  }
  const w = wf.data;
  const dirty = JSON.stringify(draft) !== JSON.stringify(w.workflow_definition);
  const invalid = issuesByElement(saveError, draft);
  const save = () =>
    action.run(async () => {
      setSaveError(null);
      try {
        const updated = await put(`/workflow/${id}`, { workflow_definition: draft });
        wf.setData(updated);
        setDraft(structuredClone(updated.workflow_definition));
      } catch (e) {
        setSaveError(e);
        throw e;
      }
    });
  const setStatus = (status: 'active' | 'archived') =>
    action.run(async () => {
      wf.setData(await put(`/workflow/${id}/status`, { status }));
    });
  const updateNode = (n: GNode) => setDraft({ ...draft, nodes: draft.nodes.map((x) => (x.id === n.id ? n : x)) });
  const updateEdge = (e: GEdge) => setDraft({ ...draft, edges: draft.edges.map((x) => (x.id === e.id ? e : x)) });
  const selNode = selected?.startsWith('node:') ? draft.nodes.find((n) => `node:${n.id}` === selected) : undefined;
  const selEdge = selected?.startsWith('edge:') ? draft.edges.find((e) => `edge:${e.id}` === selected) : undefined;
  const tabs: [Tab, string][] = [
    ['graph', 'Graph & test chat'],
    ['config', 'Configuration'],
    ['versions', 'Versions'],
    ['runs', 'Runs'],
  ];
  return (
    <>
      <div class="title-row">
        <h1>{w.name}</h1>
        <span class={`badge ${w.status}`}>{w.status}</span>
        <span class="muted">
          v{w.version_number} · {w.total_runs ?? 0} calls
        </span>
        <span class="grow" />
        {w.status === 'active' ? (
          <button type="button" onClick={() => confirm('Archive this agent? It gets no calls until restored.') && setStatus('archived')}>
            Archive
          </button>
        ) : (
          <button type="button" onClick={() => setStatus('active')}>
            Restore
          </button>
        )}
      </div>
      <div role="tablist" class="tabs" aria-label="Agent">
        {tabs.map(([t, label]) => (
          <button type="button" role="tab" id={`tab-${t}`} aria-selected={tab === t} aria-controls={`panel-${t}`} onClick={() => setTab(t)}>
            {label}
          </button>
        ))}
      </div>
      <ErrorBox error={action.error && !(action.error instanceof ApiError && action.error.issues.length) ? action.error : null} />
      {tab === 'graph' ? (
        <div role="tabpanel" id="panel-graph" aria-labelledby="tab-graph" class="split">
          <div class="card graph-card">
            <div class="row">
              <strong>Definition</strong>
              {dirty ? <span class="badge draft">unsaved changes</span> : null}
              <span class="grow" />
              <button type="button" disabled={!dirty || action.busy} onClick={() => (setDraft(structuredClone(w.workflow_definition)), setSaveError(null))}>
                Discard
              </button>
              <button type="button" class="primary" disabled={!dirty || action.busy} onClick={save}>
                Save as new version
              </button>
            </div>
            {invalid.size ? (
              <div class="error" role="alert">
                The definition was refused; the marked elements need changes.
                {invalid.get('other')?.map((m) => <div>{m}</div>)}
              </div>
            ) : null}
            <div class="graph-scroll">
              <GraphView def={draft} selected={selected} current={current} invalid={invalid} onSelect={(k, i) => setSelected(`${k}:${i}`)} />
            </div>
            <p class="muted small">Select a node or an edge (click, or Tab then Enter) to edit it.</p>
          </div>
          <div class="side">
            {selNode ? <NodeForm key={selNode.id} node={selNode} errors={invalid.get(`node:${selNode.id}`)} onChange={updateNode} onClose={() => setSelected(null)} /> : null}
            {selEdge ? <EdgeForm key={selEdge.id} edge={selEdge} def={draft} errors={invalid.get(`edge:${selEdge.id}`)} onChange={updateEdge} onClose={() => setSelected(null)} /> : null}
            <ChatPanel workflowId={id} def={w.workflow_definition} onNode={setCurrent} />
          </div>
        </div>
      ) : null}
      {tab === 'config' ? (
        <div role="tabpanel" id="panel-config" aria-labelledby="tab-config">
          <ConfigForm workflow={w} onSaved={(u) => wf.setData(u)} />
        </div>
      ) : null}
      {tab === 'versions' ? (
        <div role="tabpanel" id="panel-versions" aria-labelledby="tab-versions">
          <Versions id={id} />
        </div>
      ) : null}
      {tab === 'runs' ? (
        <div role="tabpanel" id="panel-runs" aria-labelledby="tab-runs">
          <WorkflowRuns id={id} />
        </div>
      ) : null}
    </>
  );
}

function NodeForm({ node, errors, onChange, onClose }: { node: GNode; errors?: string[]; onChange: (n: GNode) => void; onClose: () => void }) {
  const d = node.data;
  const set = (k: string, v: unknown) => onChange({ ...node, data: { ...d, [k]: v } });
  const vars: any[] = d.extraction_variables ?? [];
  const setVar = (i: number, k: string, v: string) => set('extraction_variables', vars.map((x, j) => (j === i ? { ...x, [k]: v } : x)));
  return (
    <section class="card editor" aria-labelledby="node-form-title">
      <header class="card-head">
        <h2 id="node-form-title">
          {node.type} <code>{node.id}</code>
        </h2>
        <button type="button" onClick={onClose} aria-label="Close the node editor">
          ✕
        </button>
      </header>
      {errors ? (
        <ul class="error" role="alert" aria-label="Problems with this node">
          {errors.map((m) => (
            <li>{m}</li>
          ))}
        </ul>
      ) : null}
      <div class="field">
        <label for="node-name">Name</label>
        <input id="node-name" value={d.name ?? ''} onInput={(e) => set('name', e.currentTarget.value)} />
      </div>
      {node.type === 'startCall' ? (
        <div class="field">
          <label for="node-greeting">Greeting</label>
          <textarea id="node-greeting" rows={2} value={d.greeting ?? ''} onInput={(e) => set('greeting', e.currentTarget.value)} />
        </div>
      ) : null}
      <div class="field">
        <label for="node-prompt">Prompt</label>
        <textarea id="node-prompt" rows={6} value={d.prompt ?? ''} onInput={(e) => set('prompt', e.currentTarget.value)} />
      </div>
      {node.type === 'endCall' ? (
        <div class="field">
          <label for="node-disposition">Disposition</label>
          <input id="node-disposition" value={d.disposition ?? ''} onInput={(e) => set('disposition', e.currentTarget.value || undefined)} />
        </div>
      ) : null}
      {node.type !== 'globalNode' ? (
        <>
          <div class="field check">
            <input id="node-interrupt" type="checkbox" checked={Boolean(d.allow_interrupt)} onChange={(e) => set('allow_interrupt', e.currentTarget.checked)} />
            <label for="node-interrupt">Caller may interrupt</label>
          </div>
          <div class="field check">
            <input id="node-global" type="checkbox" checked={Boolean(d.add_global_prompt)} onChange={(e) => set('add_global_prompt', e.currentTarget.checked)} />
            <label for="node-global">Add the global prompt</label>
          </div>
          <div class="field check">
            <input id="node-extract" type="checkbox" checked={Boolean(d.extraction_enabled)} onChange={(e) => set('extraction_enabled', e.currentTarget.checked)} />
            <label for="node-extract">Extract values when leaving this node</label>
          </div>
        </>
      ) : null}
      {d.extraction_enabled ? (
        <fieldset>
          <legend>Extraction variables</legend>
          {vars.map((v, i) => (
            <div class="var-row">
              <input aria-label={`Variable ${i + 1} name`} value={v.name} onInput={(e) => setVar(i, 'name', e.currentTarget.value)} />
              <select aria-label={`Variable ${i + 1} type`} value={v.type} onChange={(e) => setVar(i, 'type', e.currentTarget.value)}>
                <option>string</option>
                <option>number</option>
                <option>boolean</option>
              </select>
              <input class="grow" aria-label={`Variable ${i + 1} prompt`} value={v.prompt} onInput={(e) => setVar(i, 'prompt', e.currentTarget.value)} />
              <button type="button" aria-label={`Remove variable ${i + 1}`} onClick={() => set('extraction_variables', vars.filter((_, j) => j !== i))}>
                ✕
              </button>
            </div>
          ))}
          <button type="button" onClick={() => set('extraction_variables', [...vars, { name: '', type: 'string', prompt: '' }])}>
            Add a variable
          </button>
        </fieldset>
      ) : null}
    </section>
  );
}

function EdgeForm({ edge, def, errors, onChange, onClose }: { edge: GEdge; def: Definition; errors?: string[]; onChange: (e: GEdge) => void; onClose: () => void }) {
  const name = (id: string) => def.nodes.find((n) => n.id === id)?.data.name ?? id;
  const set = (k: 'label' | 'condition', v: string) => onChange({ ...edge, data: { ...edge.data, [k]: v } });
  return (
    <section class="card editor" aria-labelledby="edge-form-title">
      <header class="card-head">
        <h2 id="edge-form-title">
          Edge: {name(edge.source)} → {name(edge.target)}
        </h2>
        <button type="button" onClick={onClose} aria-label="Close the edge editor">
          ✕
        </button>
      </header>
      {errors ? (
        <ul class="error" role="alert">
          {errors.map((m) => (
            <li>{m}</li>
          ))}
        </ul>
      ) : null}
      <div class="field">
        <label for="edge-label">Label</label>
        <input id="edge-label" value={edge.data.label} onInput={(e) => set('label', e.currentTarget.value)} />
      </div>
      <div class="field">
        <label for="edge-condition">Condition (when the model should take it)</label>
        <textarea id="edge-condition" rows={3} value={edge.data.condition} onInput={(e) => set('condition', e.currentTarget.value)} />
      </div>
    </section>
  );
}

function Versions({ id }: { id: number }) {
  const versions = useLoad(() => get<{ versions: any[] }>(`/workflow/${id}/versions`), [id]);
  return (
    <Section title="Version history">
      <Loading when={versions.loading && !versions.data} />
      <ErrorBox error={versions.error} />
      <ol class="versions">
        {versions.data?.versions.map((v) => (
          <li key={v.id}>
            <details>
              <summary>
                <strong>v{v.version_number}</strong> <span class={`badge ${v.version_status}`}>{v.version_status}</span> {fmtDate(v.created_at)} · {v.workflow_definition.nodes.length} nodes,{' '}
                {v.workflow_definition.edges.length} edges · definition #{v.id}
              </summary>
              <div class="graph-scroll">
                <GraphView def={v.workflow_definition} />
              </div>
              <pre>{JSON.stringify(v.workflow_definition, null, 2)}</pre>
            </details>
          </li>
        ))}
      </ol>
    </Section>
  );
}

function WorkflowRuns({ id }: { id: number }) {
  const [page, setPage] = useState(1);
  const runs = useLoad(() => get(`/workflow/${id}/runs${qs({ page, limit: 25 })}`), [id, page]);
  return (
    <Section title="Calls of this agent">
      <Loading when={runs.loading && !runs.data} />
      <ErrorBox error={runs.error} />
      <table>
        <thead>
          <tr>
            <th>Run</th>
            <th>Status</th>
            <th>Disposition</th>
            <th>Duration</th>
            <th>Created</th>
          </tr>
        </thead>
        <tbody>
          {runs.data?.runs?.map((r: any) => (
            <tr key={r.id}>
              <td>
                <a href={`/agents/${id}/runs/${r.id}`}>
                  #{r.id} {r.name}
                </a>
              </td>
              <td>{r.status}</td>
              <td>{r.disposition ?? r.gathered_context?.mapped_call_disposition ?? '—'}</td>
              <td>{fmtSeconds(r.duration_seconds ?? r.cost_info?.call_duration_seconds)}</td>
              <td>{fmtDate(r.created_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {runs.data ? <Pager page={page} totalPages={runs.data.total_pages ?? 1} total={runs.data.total_count} onPage={setPage} /> : null}
    </Section>
  );
}
