/**
 * Chats (API.md 12; docs/api.md "Chats"): trying an agent by text with the same conversation engine, prompt
 * composition and tools as a call. Each use case is scoped by organization: a workflow or chat of another one is
 * `workflow_not_found` / `chat_not_found` (404), never revealed.
 *
 * - A chat runs the definition version it was created with (the workflow's current one, or `definition_id`).
 * - The model is the workflow's `workflow_configurations.llm` as configured when the message is sent.
 * - `template_context_variables` are defaults under the chat's `initial_context` (the context wins).
 * - The model failing is 502 `llm_unavailable` with the provider's message; the user's line is kept in the stored
 *   chat (the engine's `awaiting_reply`), and sending the same text again answers it instead of adding a copy.
 * - Concurrency: see core/chats/chat.ts (409 `chat_busy`).
 */
import type { ConversationEvent, ConversationNodeRef } from '../conversation/conversation-state.js';
import { Conversation, type ConversationModel, type ConversationTurn } from '../conversation/conversation.js';
import { ConflictError, InputError, NotFoundError, ProviderApiError } from '../errors.js';
import type { ChatRepository } from '../ports/chat.repository.port.js';
import type { Clock } from '../ports/clock.port.js';
import type { LanguageModelFactory } from '../ports/language-model-factory.port.js';
import { silentLogger, type Logger } from '../ports/logger.port.js';
import type { WorkflowRepository } from '../ports/workflow.repository.port.js';
import type { WorkflowConfigurations } from '../workflows/workflow-configurations.js';
import { WorkflowGraph } from '../workflows/workflow-graph.js';
import type { Workflow } from '../workflows/workflow.js';
import { workflowNotFound } from '../workflows/workflows.use-case.js';
import { chatBusy, chatNotFound, CHAT_MESSAGE_MAX_LENGTH, type Chat } from './chat.js';

/** A chat and the node it is at (its name comes from the chat's definition). */
export interface ChatView {
  chat: Chat;
  node: ConversationNodeRef;
}

export interface ChatPageView {
  chats: ChatView[];
  totalCount: number;
  page: number;
  limit: number;
  totalPages: number;
}

/** What a caller streaming a turn (server-sent events) receives, in order, as the engine yields it. */
export type ChatEventListener = (event: ConversationEvent) => void;

export interface ChatTurnOptions {
  onEvent?: ChatEventListener;
  /** Aborting stops the turn (a client gone); what was streamed so far is kept as an interrupted line. */
  signal?: AbortSignal;
}

/** The model failed or refused: 502 with the provider's message (never a secret). */
export function llmUnavailable(e: ProviderApiError): ProviderApiError {
  return new ProviderApiError(e.provider, `The language model failed: ${e.detail}`, e.retryable, 'llm_unavailable');
}

const DEFINITION_CACHE_SIZE = 200;

/**
 * What a chat turn needs besides its state: the graph of its definition (definitions never change, so graphs are
 * kept by id) and the workflow's model. Shared by the chat use cases.
 */
export class ChatAgents {
  private readonly graphs = new Map<number, WorkflowGraph>();

  constructor(
    private readonly workflows: WorkflowRepository,
    private readonly models: LanguageModelFactory,
  ) {}

  /** The workflow, or `NotFoundError('workflow_not_found')`. */
  async workflow(organizationId: number, workflowId: number): Promise<Workflow> {
    const workflow = await this.workflows.get(organizationId, workflowId);
    if (!workflow) throw workflowNotFound();
    return workflow;
  }

  /** The graph of one of the workflow's definitions; null when the workflow has no such definition. */
  async graph(organizationId: number, workflowId: number, definitionId: number): Promise<WorkflowGraph | null> {
    const cached = this.graphs.get(definitionId);
    if (cached) return cached;
    const version = await this.workflows.getDefinition(organizationId, workflowId, definitionId);
    if (!version) return null;
    const graph = WorkflowGraph.fromDefinition(version.definition);
    if (this.graphs.size >= DEFINITION_CACHE_SIZE) this.graphs.delete(this.graphs.keys().next().value as number);
    this.graphs.set(definitionId, graph);
    return graph;
  }

  /**
   * The workflow's chat model. Throws `InputError('agent_not_configured')` when `workflow_configurations` has no
   * `llm`, and `InputError('ai_service_not_found' | 'ai_service_kind_mismatch' | 'provider_not_registered')`
   * when its service cannot serve it.
   */
  async model(organizationId: number, workflow: Workflow): Promise<ConversationModel> {
    const llm = (workflow.workflowConfigurations as WorkflowConfigurations).llm;
    if (!llm || typeof llm.service_id !== 'number' || typeof llm.model !== 'string') {
      throw new InputError(
        'agent_not_configured',
        'This agent cannot talk yet: set workflow_configurations.llm {service_id, model} to one of your AI services',
      );
    }
    try {
      const lm = await this.models.forService(organizationId, llm.service_id);
      return { lm, model: llm.model, ...(typeof llm.temperature === 'number' ? { temperature: llm.temperature } : {}) };
    } catch (e) {
      if (e instanceof NotFoundError) throw new InputError(e.code, e.detail);
      throw e;
    }
  }
}

/** Runs a turn to its end, handing each event to `onEvent`; a model failure becomes `llm_unavailable`. */
async function runTurn(turn: ConversationTurn, onEvent: ChatEventListener | undefined): Promise<void> {
  try {
    for await (const event of turn) onEvent?.(event);
  } catch (e) {
    if (e instanceof ProviderApiError) throw llmUnavailable(e);
    throw e;
  }
}

const viewOf = (chat: Chat, graph: WorkflowGraph): ChatView => {
  const node = graph.node(chat.state.node_id);
  return { chat, node: { id: chat.state.node_id, name: node?.data.name ?? chat.state.node_id } };
};

export interface CreateChatInput {
  initialContext?: Record<string, unknown>;
  /** A definition (version) of the workflow to run; default its current one. */
  definitionId?: number;
}

/**
 * Starts a chat: the first message is the startCall greeting rendered with the context, or the model's first
 * turn. Throws `NotFoundError('workflow_not_found')`, `InputError('workflow_archived')`,
 * `InputError('workflow_definition_not_found')` (a `definition_id` the workflow does not have),
 * `InputError('agent_not_configured')`, and `ProviderApiError('llm_unavailable')` when the model's first turn
 * fails (nothing is stored then). Not idempotent.
 */
export class CreateChat {
  constructor(
    private readonly agents: ChatAgents,
    private readonly chats: ChatRepository,
    private readonly clock: Clock,
    private readonly logger: Logger = silentLogger,
  ) {}

  async execute(organizationId: number, workflowId: number, input: CreateChatInput, options: ChatTurnOptions = {}): Promise<ChatView> {
    const workflow = await this.agents.workflow(organizationId, workflowId);
    if (workflow.status === 'archived') {
      throw new InputError('workflow_archived', `Workflow ${workflowId} is archived; restore it to chat with it`);
    }
    const definitionId = input.definitionId ?? workflow.currentDefinitionId;
    const graph = await this.agents.graph(organizationId, workflowId, definitionId);
    if (!graph) {
      throw new InputError('workflow_definition_not_found', `Workflow ${workflowId} has no definition ${definitionId}`);
    }
    const model = await this.agents.model(organizationId, workflow);
    const conversation = Conversation.start({
      graph, model, clock: this.clock, logger: this.logger,
      initialContext: { ...workflow.templateContextVariables, ...(input.initialContext ?? {}) },
    });
    await runTurn(conversation.open(options.signal ? { signal: options.signal } : undefined), options.onEvent);
    const chat = await this.chats.create(organizationId, { workflowId, definitionId, state: conversation.release(), now: this.clock.now() });
    return viewOf(chat, graph);
  }
}

/**
 * A user message and the agent's answer (transitions, extraction and the end included). Throws
 * `NotFoundError('workflow_not_found' | 'chat_not_found')`, `InputError('chat_message_invalid')` (text not
 * 1..4000 characters), `ConflictError('chat_ended')`, `ConflictError('chat_busy')` (another message to the chat
 * is being answered), and `ProviderApiError('llm_unavailable')` (the user's line is stored; sending the same text
 * again retries it). Not idempotent.
 */
export class SendChatMessage {
  /** Chats with a turn running in this process. */
  private readonly running = new Set<number>();

  constructor(
    private readonly agents: ChatAgents,
    private readonly chats: ChatRepository,
    private readonly clock: Clock,
    private readonly logger: Logger = silentLogger,
  ) {}

  async execute(organizationId: number, workflowId: number, chatId: number, text: string, options: ChatTurnOptions = {}): Promise<ChatView> {
    if (text.length < 1 || text.length > CHAT_MESSAGE_MAX_LENGTH) {
      throw new InputError('chat_message_invalid', `A message has 1 to ${CHAT_MESSAGE_MAX_LENGTH} characters`);
    }
    const workflow = await this.agents.workflow(organizationId, workflowId);
    const chat = await this.chats.get(organizationId, workflowId, chatId);
    if (!chat) throw chatNotFound();
    if (chat.state.status === 'ended') throw new ConflictError('chat_ended', 'This chat has ended; start a new one');
    if (this.running.has(chat.id)) throw chatBusy();
    this.running.add(chat.id);
    try {
      const graph = await this.agents.graph(organizationId, workflowId, chat.definitionId);
      if (!graph) throw chatNotFound(); // a chat's definition is never deleted; guard anyway
      const model = await this.agents.model(organizationId, workflow);
      const retry = chat.state.awaiting_reply && lastUserText(chat) === text;
      // the state read is this turn's own (the repository hands out a fresh one per read): no copies of it
      const conversation = Conversation.adopt(chat.state, { graph, model, clock: this.clock, logger: this.logger });
      const turnOptions = options.signal ? { signal: options.signal } : undefined;
      let failure: unknown;
      try {
        await runTurn(retry ? conversation.retry(turnOptions) : conversation.send(text, turnOptions), options.onEvent);
      } catch (e) {
        failure = e;
      }
      // a failed turn is stored too: the user's line stays, so the message can be retried
      const saved = await this.chats.save(organizationId, chat.id, { expectedRevision: chat.revision, state: conversation.release(), now: this.clock.now() });
      if (!saved) throw chatNotFound();
      if (failure !== undefined) throw failure;
      return viewOf(saved, graph);
    } finally {
      this.running.delete(chat.id);
    }
  }
}

function lastUserText(chat: Chat): string | undefined {
  for (let i = chat.state.messages.length - 1; i >= 0; i--) {
    const m = chat.state.messages[i];
    if (m.role === 'user') return m.text;
  }
  return undefined;
}

/** One chat. Throws `NotFoundError('workflow_not_found' | 'chat_not_found')`. Idempotent. */
export class GetChat {
  constructor(
    private readonly agents: ChatAgents,
    private readonly chats: ChatRepository,
  ) {}

  async execute(organizationId: number, workflowId: number, chatId: number): Promise<ChatView> {
    await this.agents.workflow(organizationId, workflowId);
    const chat = await this.chats.get(organizationId, workflowId, chatId);
    if (!chat) throw chatNotFound();
    const graph = await this.agents.graph(organizationId, workflowId, chat.definitionId);
    if (!graph) throw chatNotFound();
    return viewOf(chat, graph);
  }
}

/** A workflow's chats, newest first, paginated. Throws `NotFoundError('workflow_not_found')`. Idempotent. */
export class ListChats {
  constructor(
    private readonly agents: ChatAgents,
    private readonly chats: ChatRepository,
  ) {}

  async execute(organizationId: number, workflowId: number, paging: { page: number; limit: number }): Promise<ChatPageView> {
    const page = Math.max(1, Math.floor(paging.page));
    const limit = Math.max(1, Math.floor(paging.limit));
    await this.agents.workflow(organizationId, workflowId);
    const { chats, totalCount } = await this.chats.listByWorkflow(organizationId, workflowId, { page, limit });
    const views: ChatView[] = [];
    for (const chat of chats) {
      const graph = await this.agents.graph(organizationId, workflowId, chat.definitionId);
      if (graph) views.push(viewOf(chat, graph));
    }
    return { chats: views, totalCount, page, limit, totalPages: Math.ceil(totalCount / limit) };
  }
}
