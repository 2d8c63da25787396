/**
 * Node's side of the JSON media framings (Twilio, Plivo, Telnyx, the simulator): their audio travels as base64
 * payloads inside JSON text frames. core/calls/media-json-framing.ts parses and builds the frames without Node's
 * Buffer; these are the codec pieces it is handed, in one place for every framing.
 */

/** A decoded payload's bytes: from Node's shared pool, as `Buffer.from(payload, 'base64')` gives them. */
export const allocPayload = (length: number): Uint8Array => Buffer.allocUnsafe(length);

/** Base64 of `bytes` without copying them first (a view of their own buffer). */
export const base64Payload = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');

/** A base64 payload's bytes. */
export const decodeBase64Payload = (payload: string): Uint8Array => Buffer.from(payload, 'base64');

/** A text frame's UTF-8 as a string, read in place. */
export const utf8Text = (data: Uint8Array): string => Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8');
