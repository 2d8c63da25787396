import type { CampaignRepository } from '../ports/campaign.repository.port.js';
import type { Clock } from '../ports/clock.port.js';
import type { EventPublisher, PendingFact } from '../ports/event-publisher.port.js';
import type { Logger } from '../ports/logger.port.js';
import type { RunRepository } from '../ports/run.repository.port.js';
import type { WebhookRepository } from '../ports/webhook.repository.port.js';

/** A marker younger than this is left to the publish that follows its fact's write (it is usually under way). */
export const PENDING_EVENT_GRACE_MS = 2_000;

/**
 * Publishes the customer events a crash left as markers on their runs and campaigns (docs/webhooks.md
 * "Guarantees"): the fact's write stored the marker, the process died before its deliveries were stored (or
 * before the marker was cleared). Run by the sender's sweep. Each marker is published with its key, so an event
 * whose deliveries were stored already stores nothing new; the run's data is its state now (a recovered
 * `call.started` of a call that has since ended shows the ended run), a campaign event keeps its own previous
 * state and reason. A marker whose run or campaign is gone is dropped.
 */
export class WebhookEventRecovery {
  constructor(
    private readonly repo: Pick<WebhookRepository, 'pendingEvents' | 'clearPendingEvent'>,
    private readonly runs: Pick<RunRepository, 'get'>,
    private readonly campaigns: Pick<CampaignRepository, 'get'>,
    private readonly publisher: EventPublisher,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  /** Publishes up to `limit` markers older than the grace period; returns how many. Never throws. */
  async recover(limit = 500): Promise<number> {
    try {
      const before = this.clock.now().getTime() - PENDING_EVENT_GRACE_MS;
      const due = (await this.repo.pendingEvents(limit)).filter((f) => f.event.at.getTime() <= before);
      for (const f of due) await this.publishOne(f);
      if (due.length) this.log.warn({ events: due.length }, 'webhook events recovered from markers a crash left');
      return due.length;
    } catch (e) {
      this.log.error({ err: (e as Error)?.message }, 'webhook event recovery failed');
      return 0;
    }
  }

  private async publishOne(f: PendingFact): Promise<void> {
    const { event } = f;
    if (f.kind === 'run') {
      const run = await this.runs.get(f.organizationId, f.id);
      if (!run || !(event.type === 'call.started' || event.type === 'call.ended' || event.type === 'call.analyzed')) {
        await this.repo.clearPendingEvent(f.kind, f.organizationId, f.id, event.key);
        return;
      }
      await this.publisher.publish({ type: event.type, organizationId: f.organizationId, run, pending: event });
      return;
    }
    const campaign = await this.campaigns.get(f.organizationId, f.id);
    if (!campaign || !(event.type === 'campaign.started' || event.type === 'campaign.paused' || event.type === 'campaign.completed' || event.type === 'campaign.failed')) {
      await this.repo.clearPendingEvent(f.kind, f.organizationId, f.id, event.key);
      return;
    }
    await this.publisher.publish({
      type: event.type, organizationId: f.organizationId, campaign, previousState: event.previousState ?? '',
      ...(event.reason ? { reason: event.reason } : {}), pending: event,
    });
  }
}
