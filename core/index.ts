/**
 * `callplane/core`: the framework-free domain for embedders: use cases, ports, domain types and errors.
 * Wire the use cases to your own adapters (or ours); nothing here imports express, inversify or a database.
 */
export * from './errors.js';

// ports
export * from './ports/ai-service-provider-catalog.port.js';
export * from './ports/ai-service-provider.port.js';
export * from './ports/ai-service.repository.port.js';
export * from './ports/campaign.repository.port.js';
export * from './ports/chat.repository.port.js';
export * from './ports/clock.port.js';
export * from './ports/contact-list-parser.port.js';
export * from './ports/contact-sheet-reader.port.js';
export * from './ports/conversation-record.port.js';
export * from './ports/crypto.port.js';
export * from './ports/identity.repository.port.js';
export * from './ports/job-scheduler.port.js';
export * from './ports/language-model-factory.port.js';
export * from './ports/language-model.port.js';
export * from './ports/logger.port.js';
export * from './ports/object-store.port.js';
export * from './ports/organization-settings.repository.port.js';
export * from './ports/phone-address-normalizer.port.js';
export * from './ports/phone-number.repository.port.js';
export * from './ports/rate-limiter.port.js';
export * from './ports/run.repository.port.js';
export * from './ports/telephony-configuration-usage.port.js';
export * from './ports/telephony-configuration.repository.port.js';
export * from './ports/telephony-provider-catalog.port.js';
export * from './ports/telephony-provider.port.js';
export * from './ports/upload.repository.port.js';
export * from './ports/usage.repository.port.js';
export * from './ports/workflow.repository.port.js';

// AI services
export * from './ai-services/ai-service.js';
export * from './ai-services/ai-services.use-case.js';
export * from './chats/chat.js';
export * from './chats/chats.use-case.js';

// identity
export * from './identity/api-keys.use-case.js';
export * from './identity/authenticate.use-case.js';
export * from './identity/identity.js';
export * from './identity/log-in.use-case.js';
export * from './identity/session-issuer.js';
export * from './identity/sign-up.use-case.js';

// the conversation engine
export * from './conversation/conversation-record.js';
export * from './conversation/conversation-state.js';
export * from './conversation/conversation.js';
export * from './conversation/endings.js';
export * from './conversation/node-context.js';
export * from './conversation/template.js';
export * from './conversation/variable-extraction.js';

// workflows and runs
export * from './workflows/ensure-workflow-can-receive-calls.use-case.js';
export * from './workflows/example-definition.js';
export * from './workflows/validate-workflow-definition.js';
export * from './workflows/workflow-definition.schema.js';
export * from './workflows/workflow-configurations.js';
export * from './workflows/workflow-definition.js';
export * from './workflows/workflow-graph.js';
export * from './workflows/workflow.js';
export * from './workflows/workflows.use-case.js';
export * from './runs/run-status.js';
export * from './runs/run.js';
export * from './runs/runs.use-case.js';

// telephony and calls
export * from './telephony/credential-mask.js';
export * from './telephony/credential-vault.js';
export * from './telephony/phone-number.js';
export * from './telephony/phone-numbers.use-case.js';
export * from './telephony/provider-instances.js';
export * from './telephony/provider-manifest.js';
export * from './telephony/telephony-configuration.js';
export * from './telephony/telephony-configurations.use-case.js';
export * from './calls/answer-outbound-call.use-case.js';
export * from './calls/apply-call-status.use-case.js';
export * from './calls/call-outcome-listener.js';
export * from './calls/media-recording.js';
export * from './calls/media-session.js';
export * from './calls/media-streams.use-case.js';
export * from './calls/media-token.js';
export * from './calls/media-wav.js';
export * from './calls/provider-webhooks.use-case.js';
export * from './calls/receive-inbound-call.use-case.js';
export * from './calls/transfer-call.use-case.js';
export * from './calls/transfer-target.js';
export * from './ports/call-transfer.port.js';
export * from './runs/disposition-precedence.js';

// campaigns and uploads
export * from './campaigns/agent-readiness.js';
export * from './campaigns/campaign-engine.js';
export * from './campaigns/campaign.js';
export * from './campaigns/campaigns.use-case.js';
export * from './campaigns/schedule.js';
export * from './uploads/uploads.use-case.js';

// usage
export * from './usage/organization-settings.js';
export * from './usage/organization-settings.use-case.js';
export * from './usage/usage-csv.js';
export * from './usage/usage-query.js';
export * from './usage/usage-report.use-case.js';
export * from './usage/usage-slices.js';
export * from './usage/usage.js';
// event webhooks (docs/webhooks.md)
export * from './ports/event-publisher.port.js';
export * from './ports/webhook.repository.port.js';
export * from './ports/webhook-transport.port.js';
export * from './webhooks/webhook.js';
export * from './webhooks/webhook-events.js';
export * from './webhooks/webhook-signature.js';
export * from './webhooks/webhook-dispatcher.js';
export * from './webhooks/webhooks.use-case.js';
