import { beforeEach, describe, expect, it } from '@jest/globals';
import { SqliteChatRepository } from '../../adapters/storage/sqlite/chat.sqlite.js';
import { openMigratedSqlite, type SqliteDatabase } from '../../adapters/storage/sqlite/database.js';
import { SqliteWorkflowRepository } from '../../adapters/storage/sqlite/workflow.sqlite.js';
import { insertOrganization } from '../../adapters/storage/sqlite/workflow.sqlite.test-support.js';
import { ScriptedLanguageModel, VirtualClock } from '../../test/fakes/scripted-language-model.js';
import { NotFoundError, ProviderApiError } from '../errors.js';
import type { LanguageModelFactory } from '../ports/language-model-factory.port.js';
import { exampleWorkflowDefinition } from '../workflows/example-definition.js';
import { ChatAgents, CreateChat, GetChat, ListChats, SendChatMessage } from './chats.use-case.js';

const llm = { service_id: 1, model: 'test-model' };

interface Fixture {
  db: SqliteDatabase;
  org: number;
  otherOrg: number;
  workflows: SqliteWorkflowRepository;
  workflowId: number;
  definitionId: number;
  lm: ScriptedLanguageModel;
  create: CreateChat;
  send: SendChatMessage;
  get: GetChat;
  list: ListChats;
}

function setup(lm = new ScriptedLanguageModel(), configurations: Record<string, unknown> = { llm }): Promise<Fixture> {
  return (async () => {
    const db = openMigratedSqlite(':memory:');
    const org = insertOrganization(db, 'A');
    const otherOrg = insertOrganization(db, 'B');
    const workflows = new SqliteWorkflowRepository(db);
    const { workflow, current } = await workflows.create(org, {
      name: 'Dental', workflowUuid: '00000000-0000-4000-8000-000000000001', definition: structuredClone(exampleWorkflowDefinition),
      templateContextVariables: { first_name: 'friend', appointment_time: 'Tuesday at 3pm' }, workflowConfigurations: configurations, now: new Date(0),
    });
    const factory: LanguageModelFactory = {
      forService: async (o, id) => {
        if (o !== org || id !== 1) throw new NotFoundError('ai_service_not_found', 'AI service not found');
        return lm;
      },
    };
    const clock = new VirtualClock();
    const agents = new ChatAgents(workflows, factory);
    const chats = new SqliteChatRepository(db);
    return {
      db, org, otherOrg, workflows, workflowId: workflow.id, definitionId: current.id, lm,
      create: new CreateChat(agents, chats, clock), send: new SendChatMessage(agents, chats, clock),
      get: new GetChat(agents, chats), list: new ListChats(agents, chats),
    };
  })();
}

const codeOf = async (p: Promise<unknown>): Promise<[string, string]> => {
  const e = await p.then(() => null, (err: unknown) => err);
  return [(e as Error).constructor.name, (e as { code: string }).code];
};

describe('chats: create', () => {
  let f: Fixture;
  beforeEach(async () => {
    f = await setup();
  });

  it('opens with the greeting rendered with initial_context over template_context_variables, without a model call', async () => {
    const v = await f.create.execute(f.org, f.workflowId, { initialContext: { first_name: 'Dana' } });
    expect(v.node).toEqual({ id: 'start', name: 'Greeting' });
    expect(v.chat.definitionId).toBe(f.definitionId);
    expect(v.chat.state.messages.map((m) => [m.role, m.text])).toEqual([
      ['assistant', 'Hi, this is Ava from Brightsmile Dental. Am I speaking with Dana?'],
    ]);
    expect(v.chat.state.initial_context).toEqual({ first_name: 'Dana', appointment_time: 'Tuesday at 3pm' });
    expect(f.lm.requests).toHaveLength(0);
    expect(await f.get.execute(f.org, f.workflowId, v.chat.id)).toEqual(v);
  });

  it('refuses an archived workflow, an unknown definition, a workflow without llm, a missing service, and another organization', async () => {
    expect(await codeOf(f.create.execute(f.org, f.workflowId, { definitionId: 999 }))).toEqual(['InputError', 'workflow_definition_not_found']);
    expect(await codeOf(f.create.execute(f.otherOrg, f.workflowId, {}))).toEqual(['NotFoundError', 'workflow_not_found']);
    await f.workflows.update(f.org, f.workflowId, { workflowConfigurations: {}, now: new Date(1) });
    expect(await codeOf(f.create.execute(f.org, f.workflowId, {}))).toEqual(['InputError', 'agent_not_configured']);
    await f.workflows.update(f.org, f.workflowId, { workflowConfigurations: { llm: { service_id: 2, model: 'm' } }, now: new Date(1) });
    expect(await codeOf(f.create.execute(f.org, f.workflowId, {}))).toEqual(['InputError', 'ai_service_not_found']);
    await f.workflows.update(f.org, f.workflowId, { status: 'archived', now: new Date(2) });
    expect(await codeOf(f.create.execute(f.org, f.workflowId, {}))).toEqual(['InputError', 'workflow_archived']);
  });

  it('without a greeting, the first message is the model\'s turn; its failure is llm_unavailable and stores nothing', async () => {
    const def = structuredClone(exampleWorkflowDefinition);
    delete (def.nodes[0].data as { greeting?: string }).greeting;
    await f.workflows.update(f.org, f.workflowId, { definition: def, now: new Date(1) });
    f.lm.on({ system: 'make sure you are speaking with' }, { error: new ProviderApiError('openai', 'model overloaded') }, 1);
    f.lm.on({ system: 'make sure you are speaking with' }, { text: 'Hello there!' });
    const e = await f.create.execute(f.org, f.workflowId, {}).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(ProviderApiError);
    expect(e).toMatchObject({ code: 'llm_unavailable', detail: 'The language model failed: model overloaded' });
    expect((await f.list.execute(f.org, f.workflowId, { page: 1, limit: 10 })).totalCount).toBe(0);
    const v = await f.create.execute(f.org, f.workflowId, {});
    expect(v.chat.state.messages.map((m) => m.text)).toEqual(['Hello there!']);
  });
});

describe('chats: messages', () => {
  it('runs a chat of an earlier definition on that version after the workflow changed', async () => {
    const f = await setup();
    const old = await f.create.execute(f.org, f.workflowId, { initialContext: { first_name: 'Dana' } });
    const def = structuredClone(exampleWorkflowDefinition);
    def.nodes[0].data.prompt = 'NEW VERSION PROMPT';
    await f.workflows.update(f.org, f.workflowId, { definition: def, now: new Date(1) });
    f.lm.on({ system: 'make sure you are speaking with' }, { text: 'Old version speaking.' });
    f.lm.on({ system: 'NEW VERSION PROMPT' }, { text: 'New version speaking.' });
    const v = await f.send.execute(f.org, f.workflowId, old.chat.id, 'Hello?');
    expect(v.chat.state.messages.at(-1)!.text).toBe('Old version speaking.');
    const fresh = await f.create.execute(f.org, f.workflowId, { definitionId: old.chat.definitionId });
    expect(fresh.chat.definitionId).toBe(old.chat.definitionId);
  });

  it('keeps the user\'s message when the model fails; the same text again retries it without a copy', async () => {
    const f = await setup();
    const c = await f.create.execute(f.org, f.workflowId, { initialContext: { first_name: 'Dana' } });
    f.lm.on({}, { error: new ProviderApiError('openai', 'Rate limit reached', true) }, 1);
    f.lm.on({ user: 'Who is this?' }, { text: 'This is Ava from Brightsmile Dental.' });
    const e = await f.send.execute(f.org, f.workflowId, c.chat.id, 'Who is this?').catch((err: unknown) => err);
    expect(e).toMatchObject({ code: 'llm_unavailable', kind: 'provider' });
    const stored = await f.get.execute(f.org, f.workflowId, c.chat.id);
    expect(stored.chat.state.messages.map((m) => [m.role, m.text])).toEqual([
      ['assistant', 'Hi, this is Ava from Brightsmile Dental. Am I speaking with Dana?'],
      ['user', 'Who is this?'],
    ]);
    expect(stored.chat.revision).toBe(2);
    const v = await f.send.execute(f.org, f.workflowId, c.chat.id, 'Who is this?');
    expect(v.chat.state.messages.map((m) => [m.role, m.text])).toEqual([
      ['assistant', 'Hi, this is Ava from Brightsmile Dental. Am I speaking with Dana?'],
      ['user', 'Who is this?'],
      ['assistant', 'This is Ava from Brightsmile Dental.'],
    ]);
  });

  it('refuses a second message while a turn of the chat runs (chat_busy), and any message once ended (chat_ended)', async () => {
    const f = await setup();
    const c = await f.create.execute(f.org, f.workflowId, { initialContext: { first_name: 'Dana' } });
    f.lm.on({ user: 'slow' }, { text: 'Sorry, wrong person then. Goodbye.' });
    const events: string[] = [];
    const first = f.send.execute(f.org, f.workflowId, c.chat.id, 'slow', { onEvent: (e) => events.push(e.type) });
    // sent while the first is still being answered (it holds the chat until its turn is saved)
    const second = f.send.execute(f.org, f.workflowId, c.chat.id, 'fast');
    expect(await codeOf(second)).toEqual(['ConflictError', 'chat_busy']);
    await first;
    expect(events).toContain('delta');

    f.lm.on({ user: 'I am not Dana' }, { toolCalls: [{ name: 'wrong_person' }] });
    f.lm.on({ system: 'Apologize for the mix-up' }, { text: 'Sorry for the mix-up. Goodbye.' });
    const ended = await f.send.execute(f.org, f.workflowId, c.chat.id, 'I am not Dana');
    expect(ended.chat.state.status).toBe('ended');
    expect(ended.chat.state.disposition).toBe('wrong_number');
    expect(ended.node).toEqual({ id: 'end_wrong_person', name: 'Wrong person' });
    expect(await codeOf(f.send.execute(f.org, f.workflowId, c.chat.id, 'hello?'))).toEqual(['ConflictError', 'chat_ended']);
  });

  it('across processes, of two messages racing on one chat the first saved wins and the other gets chat_busy, storing nothing', async () => {
    const f = await setup();
    const c = await f.create.execute(f.org, f.workflowId, { initialContext: { first_name: 'Dana' } });
    // a second API process: its own SendChatMessage (its own in-process guard) on the same storage
    const other = new SendChatMessage(new ChatAgents(f.workflows, { forService: async () => f.lm }), new SqliteChatRepository(f.db), new VirtualClock());
    f.lm.on({ user: 'first' }, { text: 'Answer to first.' });
    f.lm.on({ user: 'second' }, { text: 'Answer to second.', firstDelayMs: 5 });
    const results = await Promise.allSettled([
      f.send.execute(f.org, f.workflowId, c.chat.id, 'first'),
      other.execute(f.org, f.workflowId, c.chat.id, 'second'),
    ]);
    expect(results[0].status).toBe('fulfilled');
    expect(results[1]).toMatchObject({ status: 'rejected', reason: { code: 'chat_busy' } });
    const stored = await f.get.execute(f.org, f.workflowId, c.chat.id);
    expect(stored.chat.state.messages.map((m) => m.text).slice(1)).toEqual(['first', 'Answer to first.']);
    expect(stored.chat.revision).toBe(2);
  });

  it('lets a chat started before its workflow was archived go on', async () => {
    const f = await setup();
    const c = await f.create.execute(f.org, f.workflowId, { initialContext: { first_name: 'Dana' } });
    await f.workflows.update(f.org, f.workflowId, { status: 'archived', now: new Date(1) });
    f.lm.on({ user: 'Still there?' }, { text: 'Yes, I am here.' });
    const v = await f.send.execute(f.org, f.workflowId, c.chat.id, 'Still there?');
    expect(v.chat.state.messages.at(-1)!.text).toBe('Yes, I am here.');
  });

  it('answers chat_not_found for another organization\'s or another workflow\'s chat, and lists newest first', async () => {
    const f = await setup();
    const a = await f.create.execute(f.org, f.workflowId, {});
    const b = await f.create.execute(f.org, f.workflowId, {});
    expect(await codeOf(f.get.execute(f.otherOrg, f.workflowId, a.chat.id))).toEqual(['NotFoundError', 'workflow_not_found']);
    expect(await codeOf(f.get.execute(f.org, f.workflowId, 999))).toEqual(['NotFoundError', 'chat_not_found']);
    expect(await codeOf(f.send.execute(f.org, f.workflowId, 999, 'hi'))).toEqual(['NotFoundError', 'chat_not_found']);
    const page = await f.list.execute(f.org, f.workflowId, { page: 1, limit: 1 });
    expect(page).toMatchObject({ totalCount: 2, page: 1, limit: 1, totalPages: 2 });
    expect(page.chats.map((v) => v.chat.id)).toEqual([b.chat.id]);
  });
});
