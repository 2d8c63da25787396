import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { get, post, session } from './api';
import { match, navigate, useLocation } from './router';
import { AgentPage } from './screens/agent';
import { AgentsPage } from './screens/agents';
import { AiServicesPage } from './screens/ai-services';
import { CampaignPage } from './screens/campaign';
import { CampaignsPage } from './screens/campaigns';
import { KeysPage } from './screens/keys';
import { LoginPage } from './screens/login';
import { RunPage } from './screens/run';
import { RunsPage } from './screens/runs';
import { TelephonyPage } from './screens/telephony';
import { WebhooksPage } from './screens/webhooks';
import './styles.css';

const NAV: [string, string][] = [
  ['/agents', 'Agents'],
  ['/campaigns', 'Campaigns'],
  ['/runs', 'Runs & usage'],
  ['/telephony', 'Telephony'],
  ['/ai-services', 'AI services'],
  ['/webhooks', 'Webhooks'],
  ['/api-keys', 'API keys'],
];

const ROUTES: [string, (p: Record<string, string>) => preact.JSX.Element][] = [
  ['/agents', () => <AgentsPage />],
  ['/agents/:id', (p) => <AgentPage id={Number(p.id)} />],
  ['/campaigns', () => <CampaignsPage />],
  ['/campaigns/:id', (p) => <CampaignPage id={Number(p.id)} />],
  ['/runs', () => <RunsPage />],
  ['/agents/:wid/runs/:id', (p) => <RunPage workflowId={Number(p.wid)} id={Number(p.id)} />],
  ['/telephony', () => <TelephonyPage />],
  ['/ai-services', () => <AiServicesPage />],
  ['/webhooks', () => <WebhooksPage />],
  ['/api-keys', () => <KeysPage />],
];

function useSession() {
  const [token, setToken] = useState(session.token);
  useEffect(() => session.subscribe(() => setToken(session.token)), []);
  return token;
}

function App() {
  const token = useSession();
  const { path } = useLocation();
  const [me, setMe] = useState<any>(null);
  useEffect(() => {
    if (!token) return setMe(null);
    get('/auth/me').then(setMe, () => setMe(null));
  }, [token]);
  if (!token) return <LoginPage />;
  if (path === '/' || path === '/login') {
    navigate('/agents', true);
    return null;
  }
  let page: preact.JSX.Element | null = null;
  for (const [pattern, view] of ROUTES) {
    const params = match(pattern, path);
    if (params) {
      page = view(params);
      break;
    }
  }
  const signOut = async () => {
    try {
      await post('/auth/logout');
    } catch {
      /* the token is dropped either way */
    }
    session.set(null);
    navigate('/', true);
  };
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a href="/agents" class="brand">
          Callplane
        </a>
        <nav aria-label="Main">
          <ul>
            {NAV.map(([href, label]) => (
              <li>
                <a href={href} aria-current={path === href || path.startsWith(href + '/') ? 'page' : undefined}>
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          {me ? <span title={me.user?.email}>{me.organization?.name}</span> : null}
          <button type="button" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {page ?? (
          <section class="card">
            <h1>Not found</h1>
            <p>
              There is no page at <code>{path}</code>. <a href="/agents">Go to the agents</a>.
            </p>
          </section>
        )}
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
