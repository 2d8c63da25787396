/**
 * Chats (API.md 12; docs/api.md "Chats"): try an agent by text. The message route answers JSON, or server-sent
 * events when the request accepts `text/event-stream`:
 *   `message` {role, text, node_id, created_at}   a line added (the user's, the agent's, a system note)
 *   `delta` {text, node_id}                         a piece of the agent's reply as the model streams it
 *   `transition` {from: {id, name}, to: {id, name}, edge_id}
 *   `end` {reason, disposition}                     the conversation ended (an endCall node)
 *   `chat` <the chat, as the JSON reply>            always the last event of a successful turn
 *   `error` {detail, code}                          a failure after the stream began (then the stream ends)
 * Errors found before anything is streamed (404, 409, 400) are ordinary JSON error responses.
 */
import type { Response } from 'express';
import type { ConversationEvent } from '../../core/conversation/conversation-state.js';
import type { ConversationMessage } from '../../core/ports/conversation-record.port.js';
import { CHAT_MESSAGE_MAX_LENGTH } from '../../core/chats/chat.js';
import type { ChatView, CreateChat, GetChat, ListChats, SendChatMessage } from '../../core/chats/chats.use-case.js';
import type { Logger } from '../../core/ports/logger.port.js';
import { mapError } from '../error-mapper.js';
import { defineRoutes } from '../routing/route.js';
import { anyObject, arr, dateTime, id, int, nullable, obj, pagination, pathParams, str } from '../routing/schema-helpers.js';

export interface ChatRouteDeps {
  create: CreateChat;
  send: SendChatMessage;
  get: GetChat;
  list: ListChats;
}

const presentMessage = (m: ConversationMessage) => ({ role: m.role, text: m.text, node_id: m.node_id, created_at: m.created_at });

/** A chat as API.md 12 defines it; `disposition` is null while the chat is active. */
export const presentChat = (v: ChatView) => ({
  id: v.chat.id,
  workflow_id: v.chat.workflowId,
  definition_id: v.chat.definitionId,
  status: v.chat.state.status,
  node: v.node,
  messages: v.chat.state.messages.map(presentMessage),
  gathered_context: v.chat.state.gathered_context,
  usage: { prompt_tokens: v.chat.state.usage.prompt_tokens, completion_tokens: v.chat.state.usage.completion_tokens },
  disposition: v.chat.state.disposition,
  created_at: v.chat.createdAt.toISOString(),
  updated_at: v.chat.updatedAt.toISOString(),
});

const nodeRef = obj({ id: str(), name: str() }, ['id', 'name']);
const messageSchema = obj(
  {
    role: str({ enum: ['user', 'assistant', 'system'] }), text: str(),
    node_id: str({ description: 'The node the conversation was at (for a transition note: the node entered)' }), created_at: dateTime(),
  },
  ['role', 'text', 'node_id', 'created_at'],
);
const chatSchema = obj(
  {
    id: id(), workflow_id: id(), definition_id: id({ description: 'The workflow definition (version) this chat runs' }),
    status: str({ enum: ['active', 'ended'] }), node: nodeRef, messages: arr(messageSchema),
    gathered_context: anyObject({ description: 'Extracted values, typed; plus mapped_call_disposition once ended' }),
    usage: obj({ prompt_tokens: int({ minimum: 0 }), completion_tokens: int({ minimum: 0 }) }, ['prompt_tokens', 'completion_tokens']),
    disposition: nullable(str({ description: 'Set when the chat ends: the endCall node\'s disposition, else completed' })),
    created_at: dateTime(), updated_at: dateTime(),
  },
  ['id', 'workflow_id', 'definition_id', 'status', 'node', 'messages', 'gathered_context', 'usage', 'disposition', 'created_at', 'updated_at'],
);

const tags = ['chats'];

/** The SSE name and data of an engine event; null for events the stream does not carry (usage, extraction results). */
export function sseEventOf(e: ConversationEvent): { event: string; data: unknown } | null {
  switch (e.type) {
    case 'message': return { event: 'message', data: presentMessage(e.message) };
    case 'delta': return { event: 'delta', data: { text: e.text, node_id: e.node_id } };
    case 'transition': return { event: 'transition', data: { from: e.from, to: e.to, edge_id: e.edge_id } };
    case 'ended': return { event: 'end', data: { reason: e.reason, disposition: e.disposition } };
    default: return null;
  }
}

const wantsEventStream = (accept: string | undefined): boolean => /\btext\/event-stream\b/i.test(accept ?? '');

/** Streams one message's turn as server-sent events; headers go out with the first event. */
async function streamTurn(res: Response, log: Logger, run: (onEvent: (e: ConversationEvent) => void, signal: AbortSignal) => Promise<ChatView>): Promise<void> {
  const controller = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) controller.abort(); // the client left: stop the model (what was said is kept)
  });
  const write = (event: string, data: unknown): void => {
    if (!res.headersSent) {
      res.status(200);
      res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
      res.setHeader('Cache-Control', 'no-cache, no-transform');
      res.setHeader('X-Accel-Buffering', 'no');
      res.flushHeaders();
    }
    if (!res.writableEnded) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  try {
    const view = await run((e) => {
      const sse = sseEventOf(e);
      if (sse) write(sse.event, sse.data);
    }, controller.signal);
    write('chat', presentChat(view));
    res.end();
  } catch (err) {
    if (controller.signal.aborted) {
      res.end(); // the client left; the chat kept what was said (an interrupted line)
      return;
    }
    if (!res.headersSent) throw err; // nothing streamed yet: an ordinary JSON error
    const mapped = mapError(err);
    if (mapped.unexpected) log.error({ err: { type: (err as Error)?.name, message: (err as Error)?.message } }, 'chat turn failed');
    const body = mapped.body as { detail: unknown; code?: string };
    write('error', { detail: body.detail, code: body.code ?? 'validation_error' });
    res.end();
  }
}

export function chatRoutes(d: ChatRouteDeps) {
  return defineRoutes([
    {
      method: 'post', path: '/workflow/{workflow_id}/chats', operationId: 'createChat', summary: 'Start a chat with an agent (try it by text)', tags, auth: 'any',
      description: 'The first message is the startCall greeting rendered with initial_context (over the workflow\'s template_context_variables), ' +
        'or, when there is none, the model\'s first turn. Needs workflow_configurations.llm (400 `agent_not_configured`); an archived workflow: ' +
        '400 `workflow_archived`; a definition_id the workflow does not have: 400 `workflow_definition_not_found`; the model failing: 502 `llm_unavailable`.',
      params: pathParams('workflow_id'),
      body: obj({
        initial_context: anyObject({ description: 'Template values ({{first_name}}), as a contact row gives a call' }),
        definition_id: id({ description: 'Run this definition (version) of the workflow; default its current one' }),
      }),
      bodyOptional: true,
      response: chatSchema, errors: [400, 404, 502],
      handler: async ({ principal, params, body }) => presentChat(await d.create.execute(principal.organizationId, params.workflow_id, {
        ...(body.initial_context !== undefined ? { initialContext: body.initial_context } : {}),
        ...(body.definition_id !== undefined ? { definitionId: body.definition_id } : {}),
      })),
    },
    {
      method: 'post', path: '/workflow/{workflow_id}/chats/{chat_id}/messages', operationId: 'sendChatMessage', summary: 'Send a message; the agent answers', tags, auth: 'any',
      description: 'Returns the chat with the new messages appended. With `Accept: text/event-stream` the answer streams as server-sent events: ' +
        '`message`, `delta`, `transition`, `end` (the chat ended), then `chat` (the chat, as the JSON reply); a failure after the stream began is an ' +
        '`error` event {detail, code}. An ended chat: 409 `chat_ended`; another message to the chat still being answered: 409 `chat_busy`. ' +
        'The model failing: 502 `llm_unavailable`; the message is kept in the chat, and sending the same text again retries it.',
      params: pathParams('workflow_id', 'chat_id'),
      body: obj({ text: str({ minLength: 1, maxLength: CHAT_MESSAGE_MAX_LENGTH }) }, ['text']),
      response: chatSchema, errors: [404, 409, 502],
      handler: async ({ principal, params, body, req, res, log }) => {
        const send = (onEvent?: (e: ConversationEvent) => void, signal?: AbortSignal) =>
          d.send.execute(principal.organizationId, params.workflow_id, params.chat_id, body.text, { ...(onEvent ? { onEvent } : {}), ...(signal ? { signal } : {}) });
        if (!wantsEventStream(req.headers.accept)) return presentChat(await send());
        await streamTurn(res, log, send);
        return undefined;
      },
    },
    {
      method: 'get', path: '/workflow/{workflow_id}/chats/{chat_id}', operationId: 'getChat', summary: 'One chat with its whole history', tags, auth: 'any',
      params: pathParams('workflow_id', 'chat_id'), response: chatSchema, errors: [404],
      handler: async ({ principal, params }) => presentChat(await d.get.execute(principal.organizationId, params.workflow_id, params.chat_id)),
    },
    {
      method: 'get', path: '/workflow/{workflow_id}/chats', operationId: 'listChats', summary: 'A workflow\'s chats, newest first', tags, auth: 'any',
      description: 'Ordered by created_at desc, then id desc. total_pages = ceil(total_count / limit).',
      params: pathParams('workflow_id'), query: obj({ ...pagination }),
      response: obj(
        { chats: arr(chatSchema), total_count: int({ minimum: 0 }), page: int({ minimum: 1 }), limit: int({ minimum: 1 }), total_pages: int({ minimum: 0 }) },
        ['chats', 'total_count', 'page', 'limit', 'total_pages'],
      ),
      errors: [404],
      handler: async ({ principal, params, query }) => {
        const p = await d.list.execute(principal.organizationId, params.workflow_id, { page: query.page, limit: query.limit });
        return { chats: p.chats.map(presentChat), total_count: p.totalCount, page: p.page, limit: p.limit, total_pages: p.totalPages };
      },
    },
  ]);
}
