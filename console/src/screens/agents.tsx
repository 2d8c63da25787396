import { useState } from 'preact/hooks';
import example from '../../../examples/agent.json';
import { get, post, qs } from '../api';
import { navigate } from '../router';
import { ErrorBox, fmtDate, Loading, Section, useAction, useLoad } from '../ui';

export function AgentsPage() {
  const [status, setStatus] = useState<'active' | 'archived' | ''>('active');
  const list = useLoad(() => get<{ workflows: any[] }>(`/workflow${qs({ status })}`), [status]);
  const [name, setName] = useState(example.name);
  const action = useAction();
  const create = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const w = await post<{ id: number }>('/workflow/create/definition', { ...example, name });
      navigate(`/agents/${w.id}`);
    });
  };
  return (
    <>
      <h1>Agents</h1>
      <Section title="New agent from the example">
        <p class="muted">The dental appointment reminder: a greeting, a confirmation with extraction, rescheduling and two endings. Edit it after creating it.</p>
        <form class="row" onSubmit={create}>
          <div class="field grow">
            <label for="agent-name">Name</label>
            <input id="agent-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </div>
          <button class="primary" type="submit" disabled={action.busy}>
            Create agent
          </button>
        </form>
        <ErrorBox error={action.error} />
      </Section>
      <Section
        title="Your agents"
        actions={
          <label>
            Show{' '}
            <select value={status} onChange={(e) => setStatus(e.currentTarget.value as any)}>
              <option value="active">active</option>
              <option value="archived">archived</option>
              <option value="">all</option>
            </select>
          </label>
        }
      >
        <Loading when={list.loading && !list.data} />
        <ErrorBox error={list.error} />
        {list.data && list.data.workflows.length === 0 ? <p class="muted">No agents here yet.</p> : null}
        <table>
          <thead>
            <tr>
              <th>Name</th>
              <th>Version</th>
              <th>Status</th>
              <th>Calls</th>
              <th>Created</th>
            </tr>
          </thead>
          <tbody>
            {list.data?.workflows.map((w) => (
              <tr key={w.id}>
                <td>
                  <a href={`/agents/${w.id}`}>{w.name}</a>
                </td>
                <td>v{w.version_number}</td>
                <td>{w.status}</td>
                <td>{w.total_runs ?? 0}</td>
                <td>{fmtDate(w.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
    </>
  );
}
