import type { Container } from 'inversify';
import { ChatAgents, CreateChat, GetChat, ListChats, SendChatMessage } from '../../core/chats/chats.use-case.js';
import { ChatRepository } from '../../core/ports/chat.repository.port.js';
import { Clock } from '../../core/ports/clock.port.js';
import { LanguageModelFactory } from '../../core/ports/language-model-factory.port.js';
import { Logger } from '../../core/ports/logger.port.js';
import { WorkflowRepository } from '../../core/ports/workflow.repository.port.js';
import { chatRoutes } from '../../http/routes/chats.routes.js';
import type { RouteDefinition } from '../../http/routing/route.js';
import { HttpRoutesToken } from '../tokens.js';
import { port, provide } from './wire.js';

/** The ports this module reads, typed once (wire.ts). */
const Ports = {
  chats: port<ChatRepository>(ChatRepository),
  workflows: port<WorkflowRepository>(WorkflowRepository),
  models: port<LanguageModelFactory>(LanguageModelFactory),
  clock: port<Clock>(Clock),
  logger: port<Logger>(Logger),
  routes: port<RouteDefinition[]>(HttpRoutesToken),
};

/**
 * Chats (API.md 12): the chat use cases on the conversation engine and the routes. Wired by name (typed
 * dependency maps). Needs the AI services module's LanguageModelFactory and a storage with a ChatRepository;
 * without them no chat route is served.
 */
export function chatsModule(c: Container): void {
  if (!c.isBound(ChatRepository) || !c.isBound(WorkflowRepository) || !c.isBound(LanguageModelFactory)) return;
  provide(c, ChatAgents, {
    deps: { workflows: Ports.workflows, models: Ports.models },
    init: (d) => new ChatAgents(d.workflows, d.models),
  });
  provide(c, CreateChat, {
    deps: { agents: ChatAgents, chats: Ports.chats, clock: Ports.clock, logger: Ports.logger },
    init: (d) => new CreateChat(d.agents, d.chats, d.clock, d.logger.child({ component: 'chats' })),
  });
  provide(c, SendChatMessage, {
    deps: { agents: ChatAgents, chats: Ports.chats, clock: Ports.clock, logger: Ports.logger },
    init: (d) => new SendChatMessage(d.agents, d.chats, d.clock, d.logger.child({ component: 'chats' })),
  });
  provide(c, GetChat, { deps: { agents: ChatAgents, chats: Ports.chats }, init: (d) => new GetChat(d.agents, d.chats) });
  provide(c, ListChats, { deps: { agents: ChatAgents, chats: Ports.chats }, init: (d) => new ListChats(d.agents, d.chats) });
  provide(c, Ports.routes, {
    deps: { create: CreateChat, send: SendChatMessage, get: GetChat, list: ListChats },
    init: (d) => chatRoutes(d),
  });
}
