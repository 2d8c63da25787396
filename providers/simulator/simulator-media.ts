/**
 * The simulator's media framing, for tests and demos: binary frames are caller audio (μ-law 8 kHz mono
 * bytes); text frames are JSON `{"event": "start", "call_id"?}`, `{"event": "audio", "track"?: "inbound" |
 * "outbound", "payload": "<base64>"}`, `{"event": "mark", "name"}`, `{"event": "stop"}`. The token is `?token=`
 * on the URL. Pure; never throws.
 */
import { readJsonMessage } from '../../core/calls/media-json-framing.js';
import { MULAW_8K_MONO, type MediaFraming, type MediaMessage } from '../../core/calls/media-session.js';

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export function parseSimulatorMediaMessage(data: Uint8Array, isBinary: boolean): MediaMessage {
  if (isBinary) return { kind: 'audio', track: 'inbound', payload: data };
  const read = readJsonMessage(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'));
  if ('ignored' in read) return read.ignored;
  const msg = read.message;
  switch (msg.event) {
    case 'start':
      return {
        kind: 'start',
        start: { tracks: ['inbound'], format: MULAW_8K_MONO, parameters: {}, ...(typeof msg.call_id === 'string' ? { providerCallId: msg.call_id } : {}) },
      };
    case 'audio': {
      const track = msg.track === undefined || msg.track === 'inbound' ? 'inbound' : msg.track === 'outbound' ? 'outbound' : null;
      if (!track) return { kind: 'ignored', reason: 'audio on an unknown track' };
      if (typeof msg.payload !== 'string' || !BASE64.test(msg.payload)) return { kind: 'ignored', reason: 'audio without a base64 payload' };
      return { kind: 'audio', track, payload: Buffer.from(msg.payload, 'base64') };
    }
    case 'mark':
      return typeof msg.name === 'string' && msg.name ? { kind: 'mark', name: msg.name } : { kind: 'ignored', reason: 'mark without a name' };
    case 'stop':
      return { kind: 'stop' };
    default:
      return { kind: 'ignored', reason: typeof msg.event === 'string' ? `unknown event "${msg.event.slice(0, 40)}"` : 'no event' };
  }
}

/**
 * The simulator drives its calls' statuses with its own timers (simulator.provider.ts), so the stream's
 * start and end do not move the run: they are recorded only.
 */
export const simulatorMediaFraming: MediaFraming = Object.freeze({
  provider: 'simulator',
  parse: parseSimulatorMediaMessage,
  tokenIn: 'query' as const,
  startMeansInProgress: false,
  stopMeansCompleted: false,
});
