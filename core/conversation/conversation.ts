/**
 * The conversation engine (docs/conversation.md): walks a workflow graph with a language model, text
 * in and text out. Pure: no I/O besides the `LanguageModel` it is given, time from the injected `Clock`.
 *
 * A conversation is driven by turns. Each turn method returns a `ConversationTurn`: an async iterable of
 * `ConversationEvent`s that runs when iterated (or `collect()`ed). One turn runs at a time; starting another
 * while one runs throws `ConflictError('conversation_busy')` from the iterator. Between turns, `state` is a
 * plain-JSON snapshot that `Conversation.resume` carries on from.
 *
 * - `open()`: the startCall node's greeting (rendered) as the first assistant line, else the model's first turn.
 * - `send(text)`: a user line, then the model streams under the current node's prompt and tools. Tool calls of
 *   a response all get their results first (`{"status":"done"}` for the transition taken); then, at most once
 *   per response, the conversation moves to the edge's target, starting the leaving node's extraction, and the
 *   model answers again under the new node in the same turn. A second transition call in one response gets
 *   `{"status":"ignored",...}`. Entering an endCall node: the model says its last words without tools, then
 *   the conversation ends with the node's disposition. DTMF is user text: `send('[DTMF 5]')`.
 * - `retry()`: the model answers the history again (after a failed turn; the user's line was kept).
 * - `userIdle()`: first silence → the model checks in; second in a row → a goodbye, then `user_idle`.
 * - `maxDurationReached({goodbye})`, `hangUp()`: abort a running turn and end (`max_duration`, `hang_up`).
 * - `agentInterrupted(heardText)`: barge-in; aborts a running turn and cuts the last assistant line to what
 *   the caller heard. `holdTurn()` / `releaseTurn()`: a barge-in not yet judged; the running turn streams on
 *   but commits nothing (no line, tool call, transition, extraction or ending) until released (a false
 *   interruption: it goes on as if never cut) or aborted by `agentInterrupted` (a real one).
 *   `agentResumed(cutText, heardText, interrupted)`: after a false interruption the agent said the rest of a
 *   reply that had finished; what was heard of it continues that line.
 * - `abort()`: stops the running turn now; its iterator throws an `AbortError`. Text streamed so far is kept as
 *   an interrupted assistant line.
 *
 * Extraction runs in the background while the model answers at the new node (it never delays the reply); a
 * turn ends only once the extractions it started are in, so `state` read after a turn holds their values. Its
 * failures become a system note and never break the turn. When an aborted turn leaves extractions running,
 * `settle()` (or the next turn) waits for them. Endings run the current node's extraction (if enabled) before
 * the `ended` event.
 *
 * Errors: a model failure (`ProviderApiError`) propagates out of the turn's iterator; the state keeps the
 * user's line (`awaiting_reply: true`) and drops the failed response's partial text, so `retry()` can follow.
 */
import { ConflictError } from '../errors.js';
import { systemClock, type Clock } from '../ports/clock.port.js';
import type {
  ConversationEndReason,
  ConversationMessage,
  ConversationUsage,
} from '../ports/conversation-record.port.js';
import type { ChatMessage, LanguageModel, TokenUsage, ToolCall } from '../ports/language-model.port.js';
import { silentLogger, type Logger } from '../ports/logger.port.js';
import type { GraphNode, WorkflowGraph } from '../workflows/workflow-graph.js';
import {
  CONVERSATION_STATE_VERSION,
  type ConversationEvent,
  type ConversationNodeRef,
  type ConversationState,
} from './conversation-state.js';
import {
  IDLE_CHECK_IN_INSTRUCTION,
  IDLE_GOODBYE_INSTRUCTION,
  MAX_DURATION_GOODBYE_INSTRUCTION,
  dispositionFor,
  transferFor,
} from './endings.js';
import { greetingFor, systemPromptFor, transitionToolsFor, type TransitionTool } from './node-context.js';
import { templateContextOf, type TemplateContext } from './template.js';
import { extractVariables } from './variable-extraction.js';

/** A model and its settings. */
export interface ConversationModel {
  lm: LanguageModel;
  /** The provider's model name (`gpt-4o-mini`). */
  model: string;
  temperature?: number;
  maxTokens?: number;
}

export interface ConversationOptions {
  graph: WorkflowGraph;
  model: ConversationModel;
  /** The model extraction uses; default `model`. */
  extractionModel?: ConversationModel;
  clock?: Clock;
  logger?: Logger;
  /** Model calls one turn may make (answers after tool results, after a transition); default 5. */
  maxModelCallsPerTurn?: number;
}

export interface StartOptions extends ConversationOptions {
  /** The call's or chat's initial context (a contact's row): template values. */
  initialContext?: Record<string, unknown>;
}

export interface TurnOptions {
  /** Aborting it aborts the turn, as `abort()` does. */
  signal?: AbortSignal;
}

/** One turn: iterate it once (for SSE), or `collect()` its events (for a JSON reply). */
export class ConversationTurn implements AsyncIterable<ConversationEvent> {
  private started = false;
  constructor(private readonly source: () => AsyncGenerator<ConversationEvent, void, void>) {}

  [Symbol.asyncIterator](): AsyncIterator<ConversationEvent> {
    if (this.started) throw new Error('a conversation turn runs once; start a new turn instead');
    this.started = true;
    return this.source();
  }

  /** Runs the turn to its end; rejects as the iterator throws. */
  async collect(): Promise<ConversationEvent[]> {
    const events: ConversationEvent[] = [];
    for await (const event of this) events.push(event);
    return events;
  }
}

type Body = (this: Conversation, run: RunningTurn) => AsyncGenerator<ConversationEvent, void, void>;

/** A turn in flight. Aborting marks it dead synchronously: after that it never touches the state again. */
class RunningTurn {
  readonly controller = new AbortController();
  dead = false;
  /** The assistant text streamed so far by the model call in progress. */
  partial: { text: string; node_id: string; created_at: string } | null = null;
  /** Held (`holdTurn`): resolves once released or aborted; the turn commits nothing before. */
  held: Promise<void> | null = null;
  private releaseHold: (() => void) | null = null;

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  hold(): void {
    if (this.held || this.dead) return;
    this.held = new Promise((resolve) => (this.releaseHold = resolve));
  }

  release(): void {
    const release = this.releaseHold;
    this.held = null;
    this.releaseHold = null;
    release?.();
  }

  alive(): void {
    if (this.dead) throw abortError();
  }
}

type ExtractionOutcome =
  | { node_id: string; values: Record<string, unknown>; usage?: TokenUsage }
  | { node_id: string; error: unknown };

export class Conversation {
  private readonly state_: ConversationState;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly maxCalls: number;
  private running: RunningTurn | null = null;
  /** `release()` handed the state over: no turn runs any more. */
  private released = false;
  private pendingExtractions: Promise<ExtractionOutcome>[] = [];
  /** Background extractions outlive aborted turns; only `dispose()` stops them. */
  private readonly extractionController = new AbortController();

  private constructor(
    private readonly options: ConversationOptions,
    state: ConversationState,
  ) {
    this.state_ = state;
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? silentLogger;
    this.maxCalls = Math.max(1, options.maxModelCallsPerTurn ?? 5);
  }

  /** A new conversation at the graph's startCall node. Nothing is said until `open()` runs. */
  static start(options: StartOptions): Conversation {
    const clock = options.clock ?? systemClock;
    const at = clock.now().toISOString();
    const start = options.graph.start;
    const state: ConversationState = {
      version: CONVERSATION_STATE_VERSION,
      status: 'active',
      node_id: start.id,
      node_path: [start.id],
      messages: [],
      history: [],
      initial_context: structuredClone(options.initialContext ?? {}),
      gathered_context: {},
      disposition: null,
      end_reason: null,
      usage: { prompt_tokens: 0, completion_tokens: 0 },
      log: [{ type: 'node_entered', at, node_id: start.id, node_name: start.data.name }],
      idle_strikes: 0,
      awaiting_reply: false,
      started_at: at,
      ended_at: null,
    };
    return new Conversation(options, state);
  }

  /**
   * Carries on from a stored `state` (a copy is taken). Throws `Error` when the state is of another version or
   * names a node the graph does not have (the definition changed under it).
   */
  static resume(state: ConversationState, options: ConversationOptions): Conversation {
    return Conversation.adopt(structuredClone(state), options);
  }

  /**
   * Carries on from `state` itself, without the copy `resume` takes (a state of 20 chat turns costs ~80 µs to
   * clone): for a driver that hands over a state nobody else holds, such as one just parsed from storage. The
   * conversation changes that object from now on. Same checks and throws as `resume`.
   */
  static adopt(state: ConversationState, options: ConversationOptions): Conversation {
    if (state.version !== CONVERSATION_STATE_VERSION) {
      throw new Error(`conversation state version ${String(state.version)} is not ${CONVERSATION_STATE_VERSION}`);
    }
    options.graph.requireNode(state.node_id);
    return new Conversation(options, state);
  }

  /** A plain-JSON copy of the state: store it, resume from it. Read it between turns. */
  get state(): ConversationState {
    return structuredClone(this.state_);
  }

  /**
   * Hands the state over without a copy, for a driver that is done with this conversation (a chat turn storing
   * and answering it): background extractions stop as with `dispose()`, nothing changes the state afterwards,
   * and a later turn throws `ConflictError('conversation_released')`. Throws `ConflictError('conversation_busy')`
   * while a turn runs.
   */
  release(): ConversationState {
    if (this.running) throw new ConflictError('conversation_busy', 'a turn of this conversation is still running; abort it first');
    this.released = true;
    if (this.pendingExtractions.length > 0) this.extractionController.abort(); // only an aborted turn leaves some
    this.pendingExtractions = [];
    return this.state_;
  }

  get status(): 'active' | 'ended' {
    return this.state_.status;
  }

  get node(): ConversationNodeRef {
    return nodeRef(this.currentNode());
  }

  /** Whether a turn is running. */
  get busy(): boolean {
    return this.running !== null;
  }

  // -------------------------------------------------------------------------------------------------------
  // Turns

  /** The first words: the start node's greeting, else the model's first turn. */
  open(options?: TurnOptions): ConversationTurn {
    return this.turn(options, true, async function* (this: Conversation, run) {
      const greeting = greetingFor(this.currentNode(), this.templateContext(), this.clock.now());
      if (greeting === undefined) {
        yield* this.respond(run, true);
        return;
      }
      const at = this.now();
      this.state_.history.push({ role: 'assistant', content: greeting });
      yield this.addMessage({ role: 'assistant', text: greeting, node_id: this.state_.node_id, created_at: at, ended_at: at });
    });
  }

  /** A user line (speech transcript, chat text or `[DTMF 5]`), then the model's answer. */
  send(text: string, options?: TurnOptions): ConversationTurn {
    return this.turn(options, true, async function* (this: Conversation, run) {
      this.state_.idle_strikes = 0;
      this.state_.history.push({ role: 'user', content: text });
      this.state_.awaiting_reply = true;
      yield this.addMessage({ role: 'user', text, node_id: this.state_.node_id, created_at: this.now() });
      yield* this.respond(run, true);
    });
  }

  /** The model answers the history as it stands (after a failed turn). */
  retry(options?: TurnOptions): ConversationTurn {
    return this.turn(options, true, async function* (this: Conversation, run) {
      yield* this.respond(run, true);
    });
  }

  /** The caller has been silent for the idle timeout: check in the first time, say goodbye and end the second. */
  userIdle(options?: TurnOptions): ConversationTurn {
    return this.turn(options, false, async function* (this: Conversation, run) {
      const strikes = ++this.state_.idle_strikes;
      const last = strikes >= 2;
      yield this.note(last ? 'The caller is still silent; the agent says goodbye.' : 'The caller is silent; the agent checks in.');
      this.state_.history.push({ role: 'user', content: last ? IDLE_GOODBYE_INSTRUCTION : IDLE_CHECK_IN_INSTRUCTION });
      this.state_.awaiting_reply = true;
      yield* this.respond(run, !last);
      if (last && this.state_.status === 'active') yield* this.end(run, 'user_idle');
    });
  }

  /** The time limit: a running turn is aborted; with `goodbye` the model says one, then the end (`max_duration`). */
  maxDurationReached(options: TurnOptions & { goodbye?: boolean } = {}): ConversationTurn {
    this.abort();
    return this.turn(options, false, async function* (this: Conversation, run) {
      if (options.goodbye) {
        this.state_.history.push({ role: 'user', content: MAX_DURATION_GOODBYE_INSTRUCTION });
        this.state_.awaiting_reply = true;
        yield* this.respond(run, false);
      }
      if (this.state_.status === 'active') yield* this.end(run, 'max_duration');
    });
  }

  /** The caller hung up (or the driver ends the conversation): a running turn is aborted, then the end. */
  hangUp(options?: TurnOptions): ConversationTurn {
    this.abort();
    return this.turn(options, false, async function* (this: Conversation, run) {
      yield* this.end(run, 'hang_up');
    });
  }

  /**
   * Barge-in: the caller spoke over the agent. A running turn is aborted; the last assistant line becomes
   * `heardText` (what the caller actually heard), marked interrupted, or disappears when nothing was heard.
   */
  agentInterrupted(heardText: string): void {
    this.abort();
    const messages = this.state_.messages;
    const index = findLastIndex(messages, (m) => m.role === 'assistant');
    if (index < 0) return;
    const heard = heardText.trim();
    const said = messages[index].text;
    const historyIndex = findLastIndex(this.state_.history, (m) => m.role === 'assistant' && m.content === said);
    const historyMessage = historyIndex >= 0 ? this.state_.history[historyIndex] : undefined;
    if (historyMessage && historyMessage.role === 'assistant') {
      if (heard === '' && !historyMessage.toolCalls?.length) this.state_.history.splice(historyIndex, 1);
      else historyMessage.content = heard;
    }
    if (heard === '') messages.splice(index, 1);
    else messages[index] = { ...messages[index], text: heard, interrupted: true };
  }

  /**
   * After a false interruption (the caller's words over the agent were only a backchannel, or noise) the
   * agent said more of its cut line: `heardText` (what the caller heard of that continuation) joins the last
   * assistant line, which it continues when that line reads `cutText` (what was heard before the cut), else
   * (nothing was heard before the cut) it becomes a new assistant line. `interrupted`: the continuation was
   * itself cut. Nothing heard: nothing changes. Not idempotent (once per continuation); never throws.
   */
  agentResumed(cutText: string, heardText: string, interrupted: boolean): void {
    const heard = heardText.trim();
    if (heard === '') return;
    const cut = cutText.trim();
    const messages = this.state_.messages;
    const index = findLastIndex(messages, (m) => m.role === 'assistant');
    const history = this.state_.history;
    const historyIndex = findLastIndex(history, (m) => m.role === 'assistant');
    if (cut !== '' && index >= 0 && messages[index].text === cut) {
      const { interrupted: _previous, ...line } = messages[index];
      messages[index] = { ...line, text: `${cut} ${heard}`, ...(interrupted ? { interrupted: true as const } : {}) };
      const h = historyIndex >= 0 ? history[historyIndex] : undefined;
      if (h && h.role === 'assistant' && h.content === cut) h.content = `${cut} ${heard}`;
      return;
    }
    const at = this.now();
    history.push({ role: 'assistant', content: heard });
    messages.push({ role: 'assistant', text: heard, node_id: this.state_.node_id, created_at: at, ended_at: at, ...(interrupted ? { interrupted: true as const } : {}) });
  }

  /**
   * A barge-in whose judgement is pending (docs/voice.md "Barge-in", rule 3): the running turn goes on with the
   * model call in progress (its `delta` and `usage` events still come) but commits and acts on nothing more (the
   * reply's line, its tool calls, a transition, an extraction, an ending) until the judgement:
   * `releaseTurn()` (the interruption was false: the turn goes on exactly as if it had not been cut) or
   * `agentInterrupted(heardText)` (it was real: the turn is aborted, nothing of it after the cut is kept).
   * Everything the turn committed before the hold stands (a response that had finished streaming, its tool
   * calls answered, a transition taken). Returns false when no turn runs (nothing to hold). Idempotent.
   */
  holdTurn(): boolean {
    if (!this.running) return false;
    this.running.hold();
    return true;
  }

  /** The held turn goes on (see `holdTurn`); nothing held, nothing happens. */
  releaseTurn(): void {
    this.running?.release();
  }

  /** Whether the running turn is held (`holdTurn`). */
  get held(): boolean {
    return this.running?.held != null;
  }

  /** Stops the running turn now (its iterator throws an `AbortError`). Nothing runs: nothing happens. */
  abort(): void {
    if (this.running) this.abortRun(this.running);
  }

  /** Waits for extractions an aborted turn left running and applies them; their events are returned. */
  async settle(): Promise<ConversationEvent[]> {
    const events: ConversationEvent[] = [];
    while (this.pendingExtractions.length > 0) {
      const batch = this.pendingExtractions;
      this.pendingExtractions = [];
      for (const outcome of await Promise.all(batch)) events.push(...this.applyExtraction(outcome));
    }
    return events;
  }

  /** Stops everything, background extractions included (a call torn down). The state stays readable. */
  dispose(): void {
    this.abort();
    this.extractionController.abort();
  }

  // -------------------------------------------------------------------------------------------------------
  // Turn machinery

  private turn(options: TurnOptions | undefined, refuseWhenEnded: boolean, body: Body): ConversationTurn {
    const self = this;
    return new ConversationTurn(async function* () {
      if (self.released) throw new ConflictError('conversation_released', 'the conversation handed its state over; resume it to go on');
      if (self.state_.status === 'ended') {
        if (refuseWhenEnded) throw new ConflictError('conversation_ended', 'the conversation has ended');
        return;
      }
      if (self.running) {
        throw new ConflictError('conversation_busy', 'a turn of this conversation is still running; abort it first');
      }
      const run = new RunningTurn();
      self.running = run;
      const external = options?.signal;
      const onAbort = (): void => self.abortRun(run);
      external?.addEventListener('abort', onAbort, { once: true });
      if (external?.aborted) onAbort();
      const inner = body.call(self, run);
      let finished = false;
      try {
        for (const event of await self.settle()) {
          run.alive();
          yield event;
        }
        for (;;) {
          run.alive();
          const next = await inner.next();
          run.alive();
          if (next.done) break;
          yield next.value;
        }
        run.alive();
        for (const event of await self.settle()) {
          run.alive();
          yield event;
        }
        finished = true;
      } finally {
        // A consumer that stops iterating early (a client gone) aborts the turn: streamed text is kept.
        if (!finished) self.abortRun(run);
        external?.removeEventListener('abort', onAbort);
        if (self.running === run) self.running = null;
        await inner.return(undefined);
      }
    });
  }

  private abortRun(run: RunningTurn): void {
    if (run.dead) return;
    run.dead = true;
    run.release(); // a held turn wakes up dead and stops
    const partial = run.partial;
    run.partial = null;
    if (partial && partial.text.trim() !== '') {
      this.state_.history.push({ role: 'assistant', content: partial.text });
      this.state_.messages.push({
        role: 'assistant',
        text: partial.text,
        node_id: partial.node_id,
        created_at: partial.created_at,
        ended_at: this.now(),
        interrupted: true,
      });
      this.state_.awaiting_reply = false;
    }
    run.controller.abort();
    if (this.running === run) this.running = null;
  }

  /** Model calls until the model stops calling tools, the conversation ends, or the per-turn budget is spent. */
  private async *respond(run: RunningTurn, offerTools: boolean): AsyncGenerator<ConversationEvent, void, void> {
    for (let call = 0; call < this.maxCalls; call++) {
      const node = this.currentNode();
      const tools = offerTools && node.type !== 'endCall' ? transitionToolsFor(this.options.graph, node, this.templateContext(), this.clock.now()) : [];
      const response = yield* this.stream(run, node, tools);
      if (node.type === 'endCall') {
        this.answerToolCalls(response.toolCalls, [], () => 'no tools are available now');
        yield* this.end(run, 'end_node');
        return;
      }
      if (response.toolCalls.length === 0) return;
      const chosen = this.answerToolCalls(response.toolCalls, tools, (name) =>
        tools.length === 0 ? 'no tools are available now' : `unknown tool '${name}'`,
      );
      if (!offerTools) return;
      if (chosen) yield* this.transition(chosen);
    }
  }

  /**
   * Every tool call of a response gets its result before anything else happens: the first transition call
   * `done`, later transition calls `ignored`, anything else an error. Returns the transition to take.
   */
  private answerToolCalls(
    calls: ToolCall[],
    tools: TransitionTool[],
    unknown: (name: string) => string,
  ): TransitionTool | undefined {
    let chosen: TransitionTool | undefined;
    for (const call of calls) {
      const tool = tools.find((t) => t.spec.name === call.name);
      let result: Record<string, unknown>;
      if (!tool) {
        result = { status: 'error', error: unknown(call.name) };
      } else if (chosen) {
        result = {
          status: 'ignored',
          reason: `only one transition per response; already moving to '${chosen.target.data.name}'`,
        };
      } else {
        chosen = tool;
        result = { status: 'done' };
      }
      this.state_.history.push({ role: 'tool', toolCallId: call.id, content: JSON.stringify(result) });
    }
    return chosen;
  }

  /** One streamed model call under `node`; commits the reply (text and tool calls) to the history. */
  private async *stream(
    run: RunningTurn,
    node: GraphNode,
    tools: TransitionTool[],
  ): AsyncGenerator<ConversationEvent, { text: string; toolCalls: ToolCall[] }, void> {
    const { lm, model, temperature, maxTokens } = this.options.model;
    const messages: ChatMessage[] = [
      { role: 'system', content: systemPromptFor(this.options.graph, node, this.templateContext(), this.clock.now()) },
      ...this.state_.history.map(copyOfChatMessage),
    ];
    const partial = { text: '', node_id: node.id, created_at: this.now() };
    run.partial = partial;
    const toolCalls: ToolCall[] = [];
    let usage: TokenUsage | undefined;
    try {
      for await (const event of lm.stream({
        model,
        messages,
        tools: tools.map((t) => t.spec),
        ...(temperature === undefined ? {} : { temperature }),
        ...(maxTokens === undefined ? {} : { maxTokens }),
        signal: run.signal,
      })) {
        run.alive();
        if (event.type === 'text') {
          if (event.text === '') continue;
          if (partial.text === '') partial.created_at = this.now();
          partial.text += event.text;
          yield { type: 'delta', text: event.text, node_id: node.id };
          run.alive();
        } else if (event.type === 'tool_call') {
          toolCalls.push(event.call);
        } else if (event.type === 'usage') {
          usage = event.usage;
        }
      }
    } catch (err) {
      if (run.partial === partial) run.partial = null; // a failed response leaves nothing behind
      throw err;
    }
    run.alive();
    // the tokens were spent whether or not the reply is committed
    if (usage) yield this.addUsage(usage);
    if (run.held) await this.unheld(run);
    run.partial = null;
    this.state_.awaiting_reply = false;
    if (partial.text !== '' || toolCalls.length > 0) {
      this.state_.history.push({
        role: 'assistant',
        content: partial.text,
        ...(toolCalls.length > 0 ? { toolCalls } : {}),
      });
    }
    if (partial.text.trim() !== '') {
      yield this.addMessage({
        role: 'assistant',
        text: partial.text,
        node_id: node.id,
        created_at: partial.created_at,
        ended_at: this.now(),
      });
    }
    return { text: partial.text, toolCalls };
  }

  /** Returns at once unless `run` is held; then once released (or throws if it was aborted meanwhile). */
  private async unheld(run: RunningTurn): Promise<void> {
    while (run.held) await run.held;
    run.alive();
  }

  private async *transition(tool: TransitionTool): AsyncGenerator<ConversationEvent, void, void> {
    const leaving = this.currentNode();
    if (this.extractionWanted(leaving)) {
      const snapshot = structuredClone(this.state_.messages);
      this.pendingExtractions.push(this.extract(leaving, snapshot, this.extractionController.signal));
    }
    const target = tool.target;
    const at = this.now();
    this.state_.node_id = target.id;
    this.state_.node_path.push(target.id);
    this.state_.log.push({ type: 'node_entered', at, node_id: target.id, node_name: target.data.name, edge_id: tool.edge.id });
    yield {
      type: 'transition',
      from: nodeRef(leaving),
      to: nodeRef(target),
      edge_id: tool.edge.id,
      tool_name: tool.spec.name,
    };
    yield this.addMessage({
      role: 'system',
      text: `Moved from '${leaving.data.name}' to '${target.data.name}' (${tool.edge.data.label}).`,
      node_id: target.id,
      created_at: at,
    });
  }

  /** Ends the conversation once: pending extractions, the current node's own extraction, the disposition. */
  private async *end(run: RunningTurn, reason: ConversationEndReason): AsyncGenerator<ConversationEvent, void, void> {
    for (const event of await this.settle()) yield event;
    run.alive();
    const node = this.currentNode();
    const outcome = this.extractionWanted(node) ? await this.extract(node, structuredClone(this.state_.messages), run.signal) : null;
    run.alive();
    if (run.held) await this.unheld(run); // an ending whose last words were cut waits for the judgement like a reply
    if (outcome) for (const event of this.applyExtraction(outcome)) yield event;
    const handOver = transferFor(reason, node, this.templateContext(), this.clock.now());
    const disposition = handOver?.disposition ?? dispositionFor(reason, node, this.state_.gathered_context);
    const at = this.now();
    this.state_.status = 'ended';
    this.state_.end_reason = reason;
    this.state_.disposition = disposition;
    this.state_.ended_at = at;
    this.state_.awaiting_reply = false;
    this.state_.gathered_context.mapped_call_disposition = disposition;
    if (handOver) {
      this.state_.transfer = handOver.transfer;
      this.state_.gathered_context.transfer_to = handOver.transfer.to;
      yield this.addMessage({
        role: 'system',
        text: handOver.transfer.valid
          ? `Would transfer to ${handOver.transfer.to}.`
          : `Would transfer to '${handOver.transfer.to}', but it is neither an E.164 number nor a SIP URI; no transfer.`,
        node_id: node.id,
        created_at: at,
      });
    }
    yield this.addMessage({
      role: 'system',
      text: `The conversation ended (${reason.replace('_', ' ')}); disposition: ${disposition}.`,
      node_id: node.id,
      created_at: at,
    });
    yield { type: 'ended', reason, disposition, ...(handOver ? { transfer: { ...handOver.transfer } } : {}) };
  }

  // -------------------------------------------------------------------------------------------------------
  // Extraction

  private extractionWanted(node: GraphNode): boolean {
    return node.data.extraction_enabled === true && (node.data.extraction_variables?.length ?? 0) > 0;
  }

  /** Never rejects: failures come back as an outcome with `error`. */
  private async extract(node: GraphNode, messages: ConversationMessage[], signal: AbortSignal): Promise<ExtractionOutcome> {
    const model = this.options.extractionModel ?? this.options.model;
    const extraPrompt = typeof node.data.extraction_prompt === 'string' ? node.data.extraction_prompt : undefined;
    try {
      const result = await extractVariables(
        model.lm,
        model,
        { variables: node.data.extraction_variables ?? [], messages, ...(extraPrompt ? { extraPrompt } : {}) },
        signal,
      );
      return { node_id: node.id, ...result };
    } catch (error) {
      return { node_id: node.id, error };
    }
  }

  private applyExtraction(outcome: ExtractionOutcome): ConversationEvent[] {
    const events: ConversationEvent[] = [];
    const node = this.options.graph.node(outcome.node_id);
    const name = node?.data.name ?? outcome.node_id;
    if ('error' in outcome) {
      if (isAbortError(outcome.error)) return events; // disposed: nobody is waiting for it
      const detail = outcome.error instanceof Error ? outcome.error.message : String(outcome.error);
      this.logger.warn({ node_id: outcome.node_id, err: detail }, 'variable extraction failed');
      events.push(this.note(`Extraction at '${name}' failed: ${detail}`, outcome.node_id));
      return events;
    }
    if (outcome.usage) events.push(this.addUsage(outcome.usage));
    const values = outcome.values;
    if (Object.keys(values).length > 0) {
      Object.assign(this.state_.gathered_context, values);
      const at = this.now();
      this.state_.log.push({ type: 'variables_extracted', at, node_id: outcome.node_id, values: structuredClone(values) });
      const listed = Object.entries(values)
        .map(([k, v]) => `${k} = ${JSON.stringify(v)}`)
        .join(', ');
      events.push(this.addMessage({ role: 'system', text: `Extracted at '${name}': ${listed}.`, node_id: outcome.node_id, created_at: at }));
    }
    events.push({ type: 'extracted', node_id: outcome.node_id, values: structuredClone(values) });
    return events;
  }

  // -------------------------------------------------------------------------------------------------------
  // Helpers

  private currentNode(): GraphNode {
    return this.options.graph.requireNode(this.state_.node_id);
  }

  private templateContext(): TemplateContext {
    return templateContextOf(this.state_.initial_context, this.state_.gathered_context);
  }

  private now(): string {
    return this.clock.now().toISOString();
  }

  private addMessage(message: ConversationMessage): ConversationEvent {
    this.state_.messages.push(message);
    return { type: 'message', message: { ...message } };
  }

  private note(text: string, nodeId = this.state_.node_id): ConversationEvent {
    return this.addMessage({ role: 'system', text, node_id: nodeId, created_at: this.now() });
  }

  private addUsage(usage: TokenUsage): ConversationEvent {
    const total = this.state_.usage;
    total.prompt_tokens += usage.promptTokens;
    total.completion_tokens += usage.completionTokens;
    const call: ConversationUsage = { prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens };
    return { type: 'usage', usage: call, total: { ...total } };
  }
}

/** A copy the model adapter may keep or change without touching the history (plain fields, so no structuredClone). */
function copyOfChatMessage(m: ChatMessage): ChatMessage {
  return m.role === 'assistant' && m.toolCalls ? { ...m, toolCalls: m.toolCalls.map((c) => ({ ...c })) } : { ...m };
}

function nodeRef(node: GraphNode): ConversationNodeRef {
  return { id: node.id, name: node.data.name };
}

function findLastIndex<T>(items: T[], test: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (test(items[i])) return i;
  return -1;
}

function abortError(): Error {
  return new DOMException('the conversation turn was aborted', 'AbortError');
}

export function isAbortError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'AbortError';
}
