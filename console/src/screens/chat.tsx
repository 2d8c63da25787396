import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, post, postStream } from '../api';
import { ErrorBox, useAction } from '../ui';
import type { Definition } from './graph';

interface Message {
  role: 'user' | 'assistant' | 'system';
  text: string;
  node_id?: string | null;
}

/** Test chat: talk to the agent by text, replies streamed (SSE); reports the current node to the graph. */
export function ChatPanel({ workflowId, def, onNode }: { workflowId: number; def: Definition; onNode: (id: string | null) => void }) {
  const [chat, setChat] = useState<any>(null);
  const [messages, setMessages] = useState<Message[]>([]);
  const [streaming, setStreaming] = useState<string | null>(null);
  const [text, setText] = useState('');
  const [context, setContext] = useState(() => JSON.stringify(Object.fromEntries(templateVariables(def).map((v) => [v, ''])), null, 1));
  const action = useAction();
  const log = useRef<HTMLDivElement>(null);
  const name = (id: string | null | undefined) => def.nodes.find((n) => n.id === id)?.data.name ?? id ?? '';
  useEffect(() => {
    log.current?.scrollTo?.(0, log.current.scrollHeight);
  }, [messages, streaming]);
  useEffect(() => () => onNode(null), []);

  const apply = (c: any) => {
    setChat(c);
    setMessages(c.messages);
    onNode(c.node?.id ?? null);
  };
  const start = () =>
    action.run(async () => {
      setStreaming(null);
      let initial: unknown;
      try {
        initial = JSON.parse(context || '{}');
      } catch {
        throw new Error('The chat context is not valid JSON');
      }
      apply(await post(`/workflow/${workflowId}/chats`, { initial_context: initial }));
    });
  const send = (e: Event) => {
    e.preventDefault();
    const line = text.trim();
    if (!line || !chat) return;
    setText('');
    setMessages((m) => [...m, { role: 'user', text: line }]);
    void action.run(async () => {
      let partial = '';
      try {
        await postStream(`/workflow/${workflowId}/chats/${chat.id}/messages`, { text: line }, (ev) => {
          if (ev.event === 'delta') {
            partial += ev.data.text ?? '';
            setStreaming(partial);
          } else if (ev.event === 'transition') {
            onNode(ev.data.to);
            setMessages((m) => [...m, { role: 'system', text: `→ ${name(ev.data.to)}` }]);
          } else if (ev.event === 'message') {
            partial = '';
            setStreaming(null);
            if (ev.data.role !== 'user') setMessages((m) => [...m, ev.data]);
          } else if (ev.event === 'chat') {
            setStreaming(null);
            apply(ev.data);
          } else if (ev.event === 'error') {
            throw new ApiError(502, ev.data.code, ev.data.detail);
          }
        });
      } finally {
        setStreaming(null);
      }
    });
  };
  const notConfigured = action.error instanceof ApiError && action.error.code === 'agent_not_configured';
  const ended = chat?.status === 'ended';
  const gathered = Object.entries(chat?.gathered_context ?? {});
  return (
    <section class="card chat" aria-labelledby="chat-title">
      <header class="card-head">
        <h2 id="chat-title">Test chat</h2>
        <button type="button" onClick={start} disabled={action.busy}>
          {chat ? 'Restart' : 'Start chat'}
        </button>
      </header>
      {chat ? (
        <p class="small muted" aria-live="polite">
          {ended ? `Ended${chat.disposition ? ` · disposition ${chat.disposition}` : ''}` : `At node: ${chat.node?.name ?? name(chat.node?.id)}`}
        </p>
      ) : (
        <p class="muted small">Talk to the agent by text with the agent's language model. The graph highlights the node the conversation is at.</p>
      )}
      <details>
        <summary>Context for the chat</summary>
        <div class="field">
          <label for="chat-context">Initial context (JSON: the values {'{{variables}}'} render with)</label>
          <textarea id="chat-context" rows={4} value={context} onInput={(e) => setContext(e.currentTarget.value)} />
        </div>
      </details>
      <div class="chat-log" ref={log} role="log" aria-live="polite" aria-label="Conversation">
        {messages.map((m) => (
          <div class={`msg ${m.role}`}>
            <span class="sr">{m.role === 'user' ? 'You: ' : m.role === 'assistant' ? 'Agent: ' : ''}</span>
            {m.text}
          </div>
        ))}
        {streaming !== null ? (
          <div class="msg assistant streaming">
            <span class="sr">Agent (typing): </span>
            {streaming}
          </div>
        ) : null}
      </div>
      <ErrorBox error={action.error} />
      {notConfigured ? (
        <p class="notice">
          The agent has no language model yet: add an AI service (<a href="/ai-services">AI services</a>) and pick it under Configuration.
        </p>
      ) : null}
      {chat && !ended ? (
        <form class="row" onSubmit={send}>
          <label for="chat-input" class="sr">
            Your message
          </label>
          <input id="chat-input" class="grow" maxLength={4000} value={text} onInput={(e) => setText(e.currentTarget.value)} placeholder="Say something…" autocomplete="off" />
          <button class="primary" type="submit" disabled={action.busy || !text.trim()}>
            Send
          </button>
        </form>
      ) : null}
      {gathered.length ? (
        <>
          <h3>Extracted values</h3>
          <dl class="kv" aria-label="Extracted values">
            {gathered.map(([k, v]) => (
              <>
                <dt>{k}</dt>
                <dd>{typeof v === 'object' ? JSON.stringify(v) : String(v)}</dd>
              </>
            ))}
          </dl>
        </>
      ) : null}
    </section>
  );
}

/** The `{{name}}` variables the definition's prompts, greetings and conditions use (not gathered_context.*). */
export function templateVariables(def: Definition): string[] {
  const out = new Set<string>();
  const text = JSON.stringify(def);
  for (const m of text.matchAll(/\{\{\s*(?:initial_context\.)?([A-Za-z_]\w*)\s*(?:\|[^}]*)?\}\}/g)) if (m[1] !== 'gathered_context') out.add(m[1]!);
  return [...out];
}
