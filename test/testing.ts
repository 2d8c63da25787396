/**
 * `callplane/testing`: what an embedder or plugin author needs to prove their own adapter or provider: the
 * shared contract suites every built-in adapter runs, and the local fakes of provider APIs. The suites use
 * jest (`@jest/globals`); call them from a `*.test.ts` file.
 */
export * from './contracts/identity.repository.contract.js';
export * from './contracts/job-repository.contract.js';
export * from './fakes/mongo/mongo-double.js';
export * from './fakes/ari/fake-ari-server.js';
export * from './fakes/twilio/fake-twilio-server.js';
