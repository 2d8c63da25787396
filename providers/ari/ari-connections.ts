/**
 * One managed ARI connection (an `AriClient` with its event WebSocket) per ARI configuration. Provider
 * instances lease it: a second instance of the same configuration with the same credentials shares the
 * socket (and its call tracking, so an event is handled once); an instance with changed credentials replaces
 * it (the old socket is closed); the socket closes when the last lease is released.
 */
import { createHash } from 'node:crypto';
import type { AriClient, AriClientOptions } from './ari.client.js';

/** The part of `AriClient` Callplane uses (tests may give a double). */
export type AriClientLike = Pick<
  AriClient,
  'connect' | 'originate' | 'hangup' | 'answer' | 'continueInDialplan' | 'getChannel' | 'onEvent' | 'onHealthChange' | 'health' | 'close' | 'checkCredentials'
  | 'createBridge' | 'addChannelsToBridge' | 'destroyBridge'
  | 'externalMedia' | 'getBridge'
>;

export type AriClientFactory = (options: AriClientOptions) => AriClientLike;

export interface AriConnectionTarget {
  configurationId: number;
  client: AriClientOptions;
}

interface Entry<S> {
  fingerprint: string;
  client: AriClientLike;
  session: S;
  leases: Set<object>;
}

export interface AriLease<S> {
  readonly client: AriClientLike;
  readonly session: S;
  /** Gives the lease back; the last one closes the connection. Idempotent. */
  release(): Promise<void>;
}

export class AriConnectionManager<S extends { dispose(): void }> {
  private readonly entries = new Map<number, Entry<S>>();

  constructor(
    private readonly factory: AriClientFactory,
    /** Builds the per-connection state (event handling) once per client. */
    private readonly makeSession: (client: AriClientLike, configurationId: number) => S,
  ) {}

  /**
   * A lease on the configuration's connection, creating it (not yet connected) when there is none or when the
   * credentials changed (the previous connection is closed in the background).
   */
  acquire(target: AriConnectionTarget): AriLease<S> & { created: boolean } {
    const fingerprint = fingerprintOf(target.client);
    let entry = this.entries.get(target.configurationId);
    let created = false;
    if (entry && entry.fingerprint !== fingerprint) {
      this.drop(target.configurationId, entry);
      entry = undefined;
    }
    if (!entry) {
      const client = this.factory(target.client);
      entry = { fingerprint, client, session: this.makeSession(client, target.configurationId), leases: new Set() };
      this.entries.set(target.configurationId, entry);
      created = true;
    }
    const token = {};
    entry.leases.add(token);
    const held = entry;
    let released = false;
    return {
      client: held.client,
      session: held.session,
      created,
      release: async () => {
        if (released) return;
        released = true;
        held.leases.delete(token);
        if (held.leases.size === 0) {
          if (this.entries.get(target.configurationId) === held) this.entries.delete(target.configurationId);
          held.session.dispose();
          await held.client.close();
        }
      },
    };
  }

  /** Configuration ids with an open connection. */
  configurations(): number[] {
    return [...this.entries.keys()];
  }

  /** Closes every connection (shutdown). */
  async closeAll(): Promise<void> {
    const all = [...this.entries.entries()];
    this.entries.clear();
    await Promise.all(all.map(async ([, e]) => {
      e.session.dispose();
      await e.client.close();
    }));
  }

  private drop(configurationId: number, entry: Entry<S>): void {
    this.entries.delete(configurationId);
    entry.leases.clear();
    entry.session.dispose();
    void entry.client.close().catch(() => undefined);
  }
}

/** Identity of a connection's target and credentials (the password only as a hash). */
function fingerprintOf(o: AriClientOptions): string {
  return createHash('sha256').update(JSON.stringify([o.url, o.app, o.username, o.password])).digest('hex');
}
