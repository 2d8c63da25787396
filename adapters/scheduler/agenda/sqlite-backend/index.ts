export { SqliteBackend, type SqliteBackendOptions } from './sqlite-backend.js';
export { SqliteJobRepository, type SqliteJobRepositoryOptions, type NextJobSort } from './sqlite-job-repository.js';
export { SqliteJobLogger } from './sqlite-job-logger.js';
