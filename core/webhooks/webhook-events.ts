import type { Clock } from '../ports/clock.port.js';
import type { EventPublisher, OutboundEvent, PendingFact } from '../ports/event-publisher.port.js';
import type { Logger } from '../ports/logger.port.js';
import type { WebhookRepository } from '../ports/webhook.repository.port.js';
import type { RunView } from '../runs/runs.use-case.js';
import type { Run } from '../runs/run.js';
import type { WebhookDelivery, WebhookDeliveryEvent, WebhookEndpoint } from './webhook.js';

/** What the outbox needs to sign links: the run's view (signed transcript/recording URLs). */
export interface RunLinks {
  view(run: Run): Promise<RunView>;
}

/** The `data` of a call event: the run with its disposition, duration, contexts and signed links (valid 1 h). */
export function callEventData(links: RunLinks, run: Run): Promise<Record<string, unknown>> {
  return links.view(run).then((v) => ({
    run_id: run.id,
    workflow_id: run.workflowId,
    campaign_id: run.campaignId,
    mode: run.mode,
    status: run.status,
    disposition: run.disposition,
    duration_seconds: run.durationSeconds,
    caller_number: run.callerNumber,
    called_number: run.calledNumber,
    initial_context: v.initialContext,
    gathered_context: v.gatheredContext,
    cost_info: run.costInfo,
    transcript_url: v.transcriptUrl,
    recording_url: v.recordingUrl,
    created_at: run.createdAt.toISOString(),
    started_at: run.startedAt?.toISOString() ?? null,
    ended_at: run.endedAt?.toISOString() ?? null,
  }));
}

/** The `data` of an event, by type (docs/webhooks.md "Events"). */
export function eventData(links: RunLinks, event: OutboundEvent): Promise<Record<string, unknown>> {
  if ('run' in event) return callEventData(links, event.run);
  if ('campaign' in event) {
    const c = event.campaign;
    return Promise.resolve({
      campaign_id: c.id, name: c.name, workflow_id: c.workflowId, state: c.state, previous_state: event.previousState,
      ...(event.reason ? { reason: event.reason } : {}),
      total_rows: c.totalRows, processed_rows: c.processedRows, failed_rows: c.failedRows, executed_count: c.executedCount,
    });
  }
  return Promise.resolve({
    phone_number_id: event.phoneNumber.id, address: event.phoneNumber.address, telephony_configuration_id: event.phoneNumber.telephonyConfigurationId,
    operation: event.operation, message: event.message,
  });
}

/** The delivered body: `{id, type, created_at, data}` (id = the delivery id, stable across retries). */
export const deliveryBody = (deliveryId: number, type: WebhookDeliveryEvent, at: Date, data: Record<string, unknown>): string =>
  deliveryBodyOf(deliveryId, type, at.toISOString(), JSON.stringify(data));

/** `deliveryBody` from the data already serialized (once per event, not once per endpoint): the same bytes. */
export const deliveryBodyOf = (deliveryId: number, type: WebhookDeliveryEvent, createdAtIso: string, dataJson: string): string =>
  `{"id":${deliveryId},"type":${JSON.stringify(type)},"created_at":${JSON.stringify(createdAtIso)},"data":${dataJson}}`;

/**
 * Where stored deliveries go in this process: `kick` asks the sender for a drain; a sender that can take more
 * now gives a `lease` so the deliveries are stored already claimed and handed to it with `take` (no claim write).
 */
export interface DeliverySink {
  kick(): void;
  /** The lease to store new deliveries under for this process, or null when it should not take them (api role, full). */
  lease?(count: number): { leaseMs: number } | null;
  /** Sends deliveries stored under this process's lease, with their endpoints as just read. */
  take?(deliveries: WebhookDelivery[], endpoints: readonly WebhookEndpoint[]): void;
}

/** Which fact an event's marker sits on. */
const markedFact = (event: OutboundEvent): { kind: PendingFact['kind']; id: number } | null =>
  'run' in event ? { kind: 'run', id: event.run.id } : 'campaign' in event ? { kind: 'campaign', id: event.campaign.id } : null;

/**
 * The EventPublisher of the webhooks feature: one storage insert per subscribed endpoint (the outbox), handed to
 * this process's sender (or a kick so a sender picks them up). An event with a marker (`pending`, stored with its
 * fact) is enqueued under its key, at most once per endpoint, and its marker is cleared by the enqueue (on SQLite
 * the same transaction; where the store cannot, right after it: a crash in between leaves the marker for the sweep,
 * `WebhookEventRecovery`). Publishing never throws and never waits for a send.
 *
 * Where the organization had endpoints subscribed to the event type at its last event, the event's data is built
 * first and the store reads the subscribed endpoints in the same write that stores the deliveries
 * (`enqueueEvent`: on SQLite one transaction, no read of its own before it; docs/benchmarks.md section 8).
 * Otherwise the endpoints are read first (`subscribedEndpoints`) so that an organization without webhooks costs
 * one read and no run view, as before; that answer is the hint for the next event of that type.
 */
export class WebhookEventPublisher implements EventPublisher {
  private readonly sink: DeliverySink;
  /** Per organization and event type: whether endpoints were subscribed at its last event (bounded). */
  private readonly subscribed = new Map<string, boolean>();

  constructor(
    private readonly repo: Pick<WebhookRepository, 'subscribedEndpoints' | 'enqueue' | 'enqueueEvent' | 'clearPendingEvent'>,
    private readonly links: RunLinks,
    private readonly clock: Clock,
    private readonly log: Logger,
    sink: DeliverySink | (() => void),
  ) {
    this.sink = typeof sink === 'function' ? { kick: sink } : sink;
  }

  async publish(event: OutboundEvent): Promise<void> {
    try {
      const fact = event.pending ? markedFact(event) : null;
      const marker = fact ? { ...fact, key: event.pending!.key } : undefined;
      const hint = `${event.organizationId}:${event.type}`;
      const eventKey = event.pending?.key ?? null;
      // a delivery's body but for its id (the event's data is built once, for every endpoint)
      const bodyAt = async (now: Date): Promise<(id: number) => string> => {
        const createdAt = (event.pending?.at ?? now).toISOString();
        const dataJson = JSON.stringify(await eventData(this.links, event));
        return (id: number) => deliveryBodyOf(id, event.type, createdAt, dataJson);
      };
      if (this.subscribed.get(hint)) {
        const now = this.clock.now();
        const body = await bodyAt(now);
        const take = this.sink.take ? this.sink.lease : undefined;
        const r = await this.repo.enqueueEvent(event.organizationId, {
          event: event.type, now, eventKey, marker, body,
          ...(take ? { lease: (count: number) => take.call(this.sink, count) } : {}),
        });
        this.note(hint, r.endpoints.length > 0);
        if (r.endpoints.length === 0) return;
        if (r.leased && this.sink.take) this.sink.take(r.deliveries, r.endpoints);
        else this.sink.kick();
        return;
      }
      const endpoints = await this.repo.subscribedEndpoints(event.organizationId, event.type);
      this.note(hint, endpoints.length > 0);
      if (endpoints.length > 0) {
        const now = this.clock.now();
        const body = await bodyAt(now);
        const lease = this.sink.take ? this.sink.lease?.(endpoints.length) ?? null : null;
        const stored = await this.repo.enqueue(event.organizationId, endpoints.map((e) => ({
          endpointId: e.id, event: event.type, now, eventKey, body,
        // the marker is cleared by the same write (on SQLite one transaction: not a second write per event)
        })), lease ?? undefined, marker);
        if (lease && this.sink.take) this.sink.take(stored, endpoints);
        else this.sink.kick();
      } else if (marker) {
        await this.repo.clearPendingEvent(marker.kind, event.organizationId, marker.id, marker.key);
      }
    } catch (e) {
      this.log.error({ organization_id: event.organizationId, event: event.type, err: (e as Error)?.message }, 'webhook event could not be stored');
    }
  }

  private note(hint: string, subscribed: boolean): void {
    if (this.subscribed.get(hint) === subscribed) return;
    if (this.subscribed.size >= 10_000) this.subscribed.delete(this.subscribed.keys().next().value as string);
    this.subscribed.set(hint, subscribed);
  }
}
