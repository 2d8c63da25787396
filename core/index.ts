/**
 * `callplane/core`: the framework-free domain for embedders: use cases, ports, domain types and errors.
 * Wire the use cases to your own adapters (or ours); nothing here imports express, inversify or a database.
 */
export * from './errors.js';

// ports
export * from './ports/clock.port.js';
export * from './ports/crypto.port.js';
export * from './ports/logger.port.js';
export * from './ports/rate-limiter.port.js';
export * from './ports/identity.repository.port.js';
export * from './ports/object-store.port.js';
export * from './ports/job-scheduler.port.js';
export * from './ports/contact-list-parser.port.js';
export * from './ports/phone-address-normalizer.port.js';
export * from './ports/workflow.repository.port.js';
export * from './ports/run.repository.port.js';
export * from './ports/telephony-provider.port.js';

// identity
export * from './identity/identity.js';
export * from './identity/session-issuer.js';
export * from './identity/sign-up.use-case.js';
export * from './identity/log-in.use-case.js';
export * from './identity/authenticate.use-case.js';
export * from './identity/api-keys.use-case.js';

// workflows and runs
export * from './workflows/workflow-definition.js';
export * from './workflows/workflow-definition.schema.js';
export * from './workflows/validate-workflow-definition.js';
export * from './workflows/example-definition.js';
export * from './workflows/workflow.js';
export * from './runs/run.js';

// telephony and campaigns
export * from './telephony/provider-manifest.js';
export * from './campaigns/schedule.js';
