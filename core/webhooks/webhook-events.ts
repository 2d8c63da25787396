import type { Clock } from '../ports/clock.port.js';
import type { EventPublisher, OutboundEvent } from '../ports/event-publisher.port.js';
import type { Logger } from '../ports/logger.port.js';
import type { WebhookRepository } from '../ports/webhook.repository.port.js';
import type { RunView } from '../runs/runs.use-case.js';
import type { Run } from '../runs/run.js';
import type { WebhookDeliveryEvent } from './webhook.js';

/** What the outbox needs to sign links: the run's view (signed transcript/recording URLs). */
export interface RunLinks {
  view(run: Run): Promise<RunView>;
}

/** The `data` of a call event: the run with its disposition, duration, contexts and signed links (valid 1 h). */
export async function callEventData(links: RunLinks, run: Run): Promise<Record<string, unknown>> {
  const v = await links.view(run);
  return {
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
  };
}

/** The `data` of an event, by type (docs/webhooks.md "Events"). */
export async function eventData(links: RunLinks, event: OutboundEvent): Promise<Record<string, unknown>> {
  if ('run' in event) return callEventData(links, event.run);
  if ('campaign' in event) {
    const c = event.campaign;
    return {
      campaign_id: c.id, name: c.name, workflow_id: c.workflowId, state: c.state, previous_state: event.previousState,
      ...(event.reason ? { reason: event.reason } : {}),
      total_rows: c.totalRows, processed_rows: c.processedRows, failed_rows: c.failedRows, executed_count: c.executedCount,
    };
  }
  return {
    phone_number_id: event.phoneNumber.id, address: event.phoneNumber.address, telephony_configuration_id: event.phoneNumber.telephonyConfigurationId,
    operation: event.operation, message: event.message,
  };
}

/** The delivered body: `{id, type, created_at, data}` (id = the delivery id, stable across retries). */
export const deliveryBody = (deliveryId: number, type: WebhookDeliveryEvent, at: Date, data: Record<string, unknown>): string =>
  JSON.stringify({ id: deliveryId, type, created_at: at.toISOString(), data });

/**
 * The EventPublisher of the webhooks feature: one storage insert per subscribed endpoint (the outbox), then a
 * kick so the sender picks them up at once. Publishing never throws and never waits for a send.
 */
export class WebhookEventPublisher implements EventPublisher {
  constructor(
    private readonly repo: Pick<WebhookRepository, 'subscribedEndpoints' | 'enqueue'>,
    private readonly links: RunLinks,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly kick: () => void,
  ) {}

  async publish(event: OutboundEvent): Promise<void> {
    try {
      const endpoints = await this.repo.subscribedEndpoints(event.organizationId, event.type);
      if (endpoints.length === 0) return;
      const now = this.clock.now();
      const data = await eventData(this.links, event);
      await this.repo.enqueue(event.organizationId, endpoints.map((e) => ({
        endpointId: e.id, event: event.type, now, body: (id: number) => deliveryBody(id, event.type, now, data),
      })));
      this.kick();
    } catch (e) {
      this.log.error({ organization_id: event.organizationId, event: event.type, err: (e as Error)?.message }, 'webhook event could not be stored');
    }
  }
}
