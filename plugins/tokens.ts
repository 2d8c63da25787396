/** Container identifiers of the parts that are not core ports. */
export const SettingsToken = Symbol.for('callplane.Settings');
export const SqliteDatabaseToken = Symbol.for('callplane.SqliteDatabase');
export const LifecycleToken = Symbol.for('callplane.Lifecycle');
/** Multi-bound: each feature module contributes its route definitions. */
export const HttpRoutesToken = Symbol.for('callplane.HttpRoutes');
/** `() => Promise<boolean>`: whether storage answers (health). */
export const StorageProbeToken = Symbol.for('callplane.StorageProbe');
export const SecretKeyToken = Symbol.for('callplane.SecretKey');
/**
 * Multi-bound: `(server) => close` hooks that attach to the HTTP server once it exists (the media WebSocket's
 * `upgrade` handler); `close` runs before the server closes. Entry points call `attachHttpServer`.
 */
export const HttpServerAttachmentToken = Symbol.for('callplane.HttpServerAttachment');
