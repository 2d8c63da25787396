/**
 * `callplane/testing`: what an embedder or plugin author needs to prove their own adapter or provider: the
 * shared contract suites every built-in adapter runs, and the local fakes of provider APIs and of MongoDB's
 * driver. The suites use jest (`@jest/globals`); call them from a `*.test.ts` file.
 */
export * from './contracts/ai-service.repository.contract.js';
export * from './contracts/campaign.repository.contract.js';
export * from './contracts/chat.repository.contract.js';
export * from './contracts/identity.repository.contract.js';
export * from './contracts/job-repository.contract.js';
export * from './contracts/language-model.contract.js';
export * from './contracts/run.repository.contract.js';
export * from './contracts/speech-to-text.contract.js';
export * from './contracts/telephony-provider.contract.js';
export * from './contracts/telephony.repository.contract.js';
export * from './contracts/text-to-speech.contract.js';
export * from './contracts/usage.repository.contract.js';
export * from './contracts/webhook-event-outbox.contract.js';
export * from './contracts/webhook.repository.contract.js';
export * from './contracts/workflow.repository.contract.js';
export * from './fakes/ari/fake-ari-server.js';
export * from './fakes/deepgram/fake-deepgram-server.js';
export * from './fakes/elevenlabs/fake-elevenlabs-server.js';
export * from './fakes/mongo/mongo-double.js';
export * from './fakes/mongo/mongo-target.js';
export * from './fakes/openai/fake-openai-server.js';
export * from './fakes/openai/fake-openai-speech.js';
export * from './fakes/plivo/fake-plivo-server.js';
export * from './fakes/scripted-language-model.js';
export * from './fakes/scripted-speech.js';
export * from './fakes/telnyx/fake-telnyx-server.js';
export * from './fakes/twilio/fake-twilio-server.js';
export * from './fakes/vonage/fake-vonage-server.js';
