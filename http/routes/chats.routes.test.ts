/**
 * Chats end to end (API.md 12) through HTTP, with the real openai provider plugin talking to the fake OpenAI
 * server (test/fakes/openai) through an `openai` AI service whose base_url points at it: the dental example agent
 * from its greeting to its endCall node, the server-sent events variant, a model failure kept for a retry, ended
 * chats, agents without a model, tenant isolation, and a chat of an earlier definition.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { exampleWorkflowDefinition } from '../../core/workflows/example-definition.js';
import { FakeOpenAiServer } from '../../test/fakes/openai/fake-openai-server.js';
import { startTestService, type Credentials, type TestService } from '../../test/support/test-service.js';

const API_KEY = 'sk-test-chat-secret-7d1f';
const DANA = { first_name: 'Dana', appointment_time: 'Tuesday at 3pm' };

let svc: TestService;
let fake: FakeOpenAiServer;
let auth: Credentials;
let serviceId: number;

beforeAll(async () => {
  fake = await FakeOpenAiServer.start({ apiKey: API_KEY });
  svc = await startTestService({ env: { CALLPLANE_ALLOW_PRIVATE_NETWORK: 'true' } });
  auth = { token: (await svc.signup()).token };
  const ai = await svc.post('/organizations/ai-services', { name: 'Fake OpenAI', config: { provider: 'openai', api_key: API_KEY, base_url: fake.baseUrl } }, auth);
  expect(ai.status).toBe(200);
  serviceId = ai.body.id;
});

afterAll(async () => {
  await svc?.close();
  await fake?.close();
});

async function dentalAgent(configurations: Record<string, unknown> = { llm: { service_id: serviceId, model: 'gpt-4o-mini', temperature: 0.2 } }): Promise<number> {
  const r = await svc.post('/workflow/create/definition', { name: 'Dental', workflow_definition: exampleWorkflowDefinition, workflow_configurations: configurations }, auth);
  expect(r.status).toBe(200);
  return r.body.id;
}

const requestsSince = (n: number) => fake.requests.slice(n);
const systemPromptOf = (body: Record<string, unknown> | null) => ((body?.messages as Array<{ role: string; content: string }>)[0]).content;
const toolNamesOf = (body: Record<string, unknown> | null) => ((body?.tools as Array<{ function: { name: string } }> | undefined) ?? []).map((t) => t.function.name);

interface SseEvent { event: string; data: any }
function parseSse(text: string): SseEvent[] {
  return text.split('\n\n').filter((b) => b.trim() !== '').map((block) => {
    const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
    const data = block.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
    return { event, data: JSON.parse(data) };
  });
}

describe('chats end to end with an openai AI service on the fake OpenAI server', () => {
  it('runs the dental agent by chat from its greeting to its endCall node, with transcript, typed will_attend, disposition and tokens', async () => {
    const wf = await dentalAgent();
    const before = fake.requests.length;
    const created = await svc.post(`/workflow/${wf}/chats`, { initial_context: DANA }, auth);
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      id: expect.any(Number), workflow_id: wf, definition_id: expect.any(Number), status: 'active', node: { id: 'start', name: 'Greeting' },
      messages: [{ role: 'assistant', text: 'Hi, this is Ava from Brightsmile Dental. Am I speaking with Dana?', node_id: 'start', created_at: expect.any(String) }],
      gathered_context: {}, usage: { prompt_tokens: 0, completion_tokens: 0 }, disposition: null,
      created_at: expect.any(String), updated_at: expect.any(String),
    });
    expect(fake.requests.length).toBe(before); // a greeting is said, not generated
    const chat = created.body.id as number;

    fake.reply(
      { text: 'Thank you, Dana.', toolCalls: [{ name: 'identity_confirmed', arguments: '{}' }] },
      { text: 'Your cleaning is on Tuesday at 3pm. Can you still make it?' },
    );
    const first = await svc.post(`/workflow/${wf}/chats/${chat}/messages`, { text: 'Yes, this is Dana.' }, auth);
    expect(first.status).toBe(200);
    expect(first.body.node).toEqual({ id: 'confirm', name: 'Confirm appointment' });
    expect(first.body.messages.map((m: { role: string; node_id: string }) => [m.role, m.node_id])).toEqual([
      ['assistant', 'start'], ['user', 'start'], ['assistant', 'start'], ['system', 'confirm'], ['assistant', 'confirm'],
    ]);
    const [atStart, atConfirm] = requestsSince(before);
    expect(atStart!.authorization).toBe(`Bearer ${API_KEY}`);
    expect(atStart!.body).toMatchObject({ model: 'gpt-4o-mini', temperature: 0.2, stream: true });
    expect(systemPromptOf(atStart!.body)).toContain('You are Ava, a friendly scheduling assistant');
    expect(systemPromptOf(atStart!.body)).toContain('make sure you are speaking with Dana');
    expect(toolNamesOf(atStart!.body).sort()).toEqual(['identity_confirmed', 'wrong_person']);
    expect(systemPromptOf(atConfirm!.body)).toContain('Remind Dana of the cleaning appointment on Tuesday at 3pm');
    expect(toolNamesOf(atConfirm!.body).sort()).toEqual(['needs_another_time', 'will_attend']);

    fake.reply({ toolCalls: [{ name: 'will_attend', arguments: '{}' }] }, { text: 'Wonderful. Please arrive ten minutes early. Goodbye!' });
    fake.replyStructured({ text: '{"will_attend": true}' });
    const second = await svc.post(`/workflow/${wf}/chats/${chat}/messages`, { text: "Yes, I'll be there." }, auth);
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({
      status: 'ended', node: { id: 'end_confirmed', name: 'Confirmed' }, disposition: 'appointment_confirmed',
      gathered_context: { will_attend: true, mapped_call_disposition: 'appointment_confirmed' },
    });
    expect(typeof second.body.gathered_context.will_attend).toBe('boolean');
    expect(second.body.usage.prompt_tokens).toBeGreaterThan(0);
    expect(second.body.usage.completion_tokens).toBeGreaterThan(0);
    const transcript = second.body.messages.filter((m: { role: string }) => m.role !== 'system').map((m: { role: string; text: string }) => `${m.role}: ${m.text}`);
    expect(transcript).toEqual([
      'assistant: Hi, this is Ava from Brightsmile Dental. Am I speaking with Dana?',
      'user: Yes, this is Dana.',
      'assistant: Thank you, Dana.',
      'assistant: Your cleaning is on Tuesday at 3pm. Can you still make it?',
      "user: Yes, I'll be there.",
      'assistant: Wonderful. Please arrive ten minutes early. Goodbye!',
    ]);
    const notes = second.body.messages.filter((m: { role: string }) => m.role === 'system').map((m: { text: string }) => m.text);
    expect(notes).toEqual(expect.arrayContaining([expect.stringContaining('will_attend = true'), expect.stringContaining('appointment_confirmed')]));
    const extraction = fake.requests.find((r) => r.body?.response_format !== undefined);
    expect(extraction?.body?.stream).not.toBe(true);

    const read = await svc.get(`/workflow/${wf}/chats/${chat}`, auth);
    expect(read.body).toEqual(second.body);
    const list = await svc.get(`/workflow/${wf}/chats`, auth);
    expect(list.body).toEqual({ chats: [second.body], total_count: 1, page: 1, limit: 50, total_pages: 1 });

    const ended = await svc.post(`/workflow/${wf}/chats/${chat}/messages`, { text: 'Wait, one more thing' }, auth);
    expect(ended.status).toBe(409);
    expect(ended.body.code).toBe('chat_ended');
    expect(svc.logs.join('\n')).not.toContain(API_KEY);
  });

  it('streams a turn as server-sent events: message, delta, transition, then the chat; a failure mid-stream is an error event', async () => {
    const wf = await dentalAgent();
    const chat = (await svc.post(`/workflow/${wf}/chats`, { initial_context: DANA }, auth)).body.id as number;
    fake.reply(
      { text: 'Thank you, Dana.', toolCalls: [{ name: 'identity_confirmed', arguments: '{}' }] },
      { text: 'Can you still make it on Tuesday?' },
    );
    const res = await fetch(`${svc.url}/api/v1/workflow/${wf}/chats/${chat}/messages`, {
      method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${auth.token}` },
      body: JSON.stringify({ text: 'Yes, this is Dana.' }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = parseSse(await res.text());
    const names = events.map((e) => e.event).filter((n, i, all) => n !== 'delta' || all[i - 1] !== 'delta');
    expect(names).toEqual(['message', 'delta', 'message', 'transition', 'message', 'delta', 'message', 'chat']);
    expect(events[0]!.data).toEqual({ role: 'user', text: 'Yes, this is Dana.', node_id: 'start', created_at: expect.any(String) });
    expect(events.filter((e) => e.event === 'delta' && e.data.node_id === 'start').map((e) => e.data.text).join('')).toBe('Thank you, Dana.');
    expect(events.find((e) => e.event === 'transition')!.data).toEqual({
      from: { id: 'start', name: 'Greeting' }, to: { id: 'confirm', name: 'Confirm appointment' }, edge_id: 'e_start_confirm',
    });
    const last = events.at(-1)!.data;
    expect(last).toEqual((await svc.get(`/workflow/${wf}/chats/${chat}`, auth)).body);
    expect(last.messages.at(-1).text).toBe('Can you still make it on Tuesday?');

    // the model failing after the stream began: an `error` event ends it; the user's line is kept
    fake.reply({ text: 'Let me check that', streamError: { afterEvents: 2, message: 'The upstream model crashed' } });
    const broken = await fetch(`${svc.url}/api/v1/workflow/${wf}/chats/${chat}/messages`, {
      method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${auth.token}` },
      body: JSON.stringify({ text: 'Which Tuesday?' }),
    });
    expect(broken.status).toBe(200);
    const brokenEvents = parseSse(await broken.text());
    expect(brokenEvents[0]!.event).toBe('message');
    expect(brokenEvents.at(-1)).toEqual({ event: 'error', data: { code: 'llm_unavailable', detail: expect.stringContaining('The upstream model crashed') } });
    expect(brokenEvents.map((e) => e.event)).not.toContain('chat');
    const keptChat = (await svc.get(`/workflow/${wf}/chats/${chat}`, auth)).body;
    expect(keptChat.messages.at(-1)).toMatchObject({ role: 'user', text: 'Which Tuesday?' });

    // an ended chat refuses before streaming: an ordinary JSON error
    fake.reply({ toolCalls: [{ name: 'will_attend', arguments: '{}' }] }, { text: 'See you then. Goodbye!' });
    fake.replyStructured({ text: '{"will_attend": true}' });
    const end = await fetch(`${svc.url}/api/v1/workflow/${wf}/chats/${chat}/messages`, {
      method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${auth.token}` },
      body: JSON.stringify({ text: 'Yes, I will be there.' }),
    });
    const endEvents = parseSse(await end.text());
    expect(endEvents.find((e) => e.event === 'end')!.data).toEqual({ reason: 'end_node', disposition: 'appointment_confirmed' });
    expect(endEvents.at(-1)!.event).toBe('chat');
    const after = await fetch(`${svc.url}/api/v1/workflow/${wf}/chats/${chat}/messages`, {
      method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${auth.token}` },
      body: JSON.stringify({ text: 'Hello?' }),
    });
    expect(after.status).toBe(409);
    expect(await after.json()).toEqual({ detail: expect.any(String), code: 'chat_ended' });
  });

  it('a client leaving a stream stops the model; the chat keeps the user\'s line and what was said, and takes the next message', async () => {
    const wf = await dentalAgent();
    const chat = (await svc.post(`/workflow/${wf}/chats`, { initial_context: DANA }, auth)).body.id as number;
    fake.reply({ text: 'Let me look that up for you right now, one moment please, Dana.', eventDelayMs: 40 });
    const n = fake.requests.length;
    const client = new AbortController();
    const res = await fetch(`${svc.url}/api/v1/workflow/${wf}/chats/${chat}/messages`, {
      method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${auth.token}` },
      body: JSON.stringify({ text: 'Who is this?' }), signal: client.signal,
    });
    const reader = res.body!.getReader();
    let seen = '';
    while (!seen.includes('event: delta')) seen += new TextDecoder().decode((await reader.read()).value);
    client.abort();
    await expect(reader.read()).rejects.toThrow();
    let stored: any;
    for (let i = 0; i < 100; i++) {
      stored = (await svc.get(`/workflow/${wf}/chats/${chat}`, auth)).body;
      if (stored.messages.length >= 3) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(stored.messages.slice(1).map((m: { role: string }) => m.role)).toEqual(['user', 'assistant']);
    expect(stored.messages[2].text.length).toBeGreaterThan(0);
    expect('Let me look that up for you right now, one moment please, Dana.'.startsWith(stored.messages[2].text)).toBe(true);
    await new Promise((r) => setTimeout(r, 50));
    expect(fake.requests[n]!.closedEarly).toBe(true);
    fake.reply({ text: 'This is Ava from Brightsmile Dental.' });
    const next = await svc.post(`/workflow/${wf}/chats/${chat}/messages`, { text: 'Hello?' }, auth);
    expect(next.status).toBe(200);
    expect(next.body.messages.at(-1).text).toBe('This is Ava from Brightsmile Dental.');
    expect(svc.logs.join('\n')).not.toContain('chat turn failed');
  });

  it('answers 502 llm_unavailable with the provider\'s message and no secret, keeps the user\'s message, and the same text retries', async () => {
    const wrongKey = 'sk-wrong-key-0123456789';
    const ai = await svc.post('/organizations/ai-services', { name: 'Misconfigured', config: { provider: 'openai', api_key: wrongKey, base_url: fake.baseUrl } }, auth);
    const wf = await dentalAgent({ llm: { service_id: ai.body.id, model: 'gpt-4o-mini' } });
    const chat = (await svc.post(`/workflow/${wf}/chats`, { initial_context: DANA }, auth)).body.id as number;

    const failed = await svc.post(`/workflow/${wf}/chats/${chat}/messages`, { text: 'Who is calling?' }, auth);
    expect(failed.status).toBe(502);
    expect(failed.body.code).toBe('llm_unavailable');
    expect(failed.body.detail).toMatch(/Incorrect API key/);
    expect(failed.text).not.toContain('0123456789');
    const kept = await svc.get(`/workflow/${wf}/chats/${chat}`, auth);
    expect(kept.body.messages.map((m: { role: string; text: string }) => [m.role, m.text])).toEqual([
      ['assistant', 'Hi, this is Ava from Brightsmile Dental. Am I speaking with Dana?'],
      ['user', 'Who is calling?'],
    ]);

    expect((await svc.put(`/organizations/ai-services/${ai.body.id}`, { config: { api_key: API_KEY } }, auth)).status).toBe(200);
    fake.reply({ text: 'This is Ava from Brightsmile Dental. Am I speaking with Dana?' });
    const retried = await svc.post(`/workflow/${wf}/chats/${chat}/messages`, { text: 'Who is calling?' }, auth);
    expect(retried.status).toBe(200);
    expect(retried.body.messages.map((m: { role: string; text: string }) => [m.role, m.text])).toEqual([
      ['assistant', 'Hi, this is Ava from Brightsmile Dental. Am I speaking with Dana?'],
      ['user', 'Who is calling?'],
      ['assistant', 'This is Ava from Brightsmile Dental. Am I speaking with Dana?'],
    ]);
    expect(svc.logs.join('\n')).not.toContain(wrongKey);
  });

  it('refuses agents without a model (400 agent_not_configured), archived workflows, bad messages, and other organizations (404)', async () => {
    const bare = await dentalAgent({});
    const r = await svc.post(`/workflow/${bare}/chats`, {}, auth);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('agent_not_configured');

    const wf = await dentalAgent();
    const chat = (await svc.post(`/workflow/${wf}/chats`, undefined, auth)).body.id as number;
    expect((await svc.post(`/workflow/${wf}/chats/${chat}/messages`, { text: '' }, auth)).status).toBe(422);
    expect((await svc.post(`/workflow/${wf}/chats/${chat}/messages`, { text: 'x'.repeat(4001) }, auth)).status).toBe(422);
    expect((await svc.post(`/workflow/${wf}/chats/999999/messages`, { text: 'hi' }, auth)).body.code).toBe('chat_not_found');

    const other = { token: (await svc.signup()).token };
    for (const res of [
      await svc.get(`/workflow/${wf}/chats/${chat}`, other),
      await svc.get(`/workflow/${wf}/chats`, other),
      await svc.post(`/workflow/${wf}/chats/${chat}/messages`, { text: 'hi' }, other),
      await svc.post(`/workflow/${wf}/chats`, {}, other),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('workflow_not_found');
    }

    expect((await svc.put(`/workflow/${wf}/status`, { status: 'archived' }, auth)).status).toBe(200);
    const archived = await svc.post(`/workflow/${wf}/chats`, {}, auth);
    expect(archived.status).toBe(400);
    expect(archived.body.code).toBe('workflow_archived');
  });

  it('runs a chat of an earlier definition_id on that version', async () => {
    const wf = await dentalAgent();
    const v1 = (await svc.get(`/workflow/${wf}`, auth)).body.current_definition_id as number;
    const changed = structuredClone(exampleWorkflowDefinition);
    changed.nodes[0]!.data.prompt = 'VERSION TWO: greet the caller.';
    expect((await svc.put(`/workflow/${wf}`, { workflow_definition: changed }, auth)).status).toBe(200);
    const v2 = (await svc.get(`/workflow/${wf}`, auth)).body.current_definition_id as number;
    expect(v2).not.toBe(v1);

    const old = await svc.post(`/workflow/${wf}/chats`, { initial_context: DANA, definition_id: v1 }, auth);
    expect(old.body.definition_id).toBe(v1);
    const current = await svc.post(`/workflow/${wf}/chats`, { initial_context: DANA }, auth);
    expect(current.body.definition_id).toBe(v2);
    const unknown = await svc.post(`/workflow/${wf}/chats`, { definition_id: 999999 }, auth);
    expect([unknown.status, unknown.body.code]).toEqual([400, 'workflow_definition_not_found']);

    const n = fake.requests.length;
    fake.reply({ text: 'Hello from version one.' }, { text: 'Hello from version two.' });
    expect((await svc.post(`/workflow/${wf}/chats/${old.body.id}/messages`, { text: 'Hello?' }, auth)).status).toBe(200);
    expect((await svc.post(`/workflow/${wf}/chats/${current.body.id}/messages`, { text: 'Hello?' }, auth)).status).toBe(200);
    const [oldReq, newReq] = requestsSince(n);
    expect(systemPromptOf(oldReq!.body)).toContain('make sure you are speaking with Dana');
    expect(systemPromptOf(oldReq!.body)).not.toContain('VERSION TWO');
    expect(systemPromptOf(newReq!.body)).toContain('VERSION TWO');
  });
});
