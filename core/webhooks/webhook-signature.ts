/**
 * The signature a receiver checks (docs/webhooks.md): `Callplane-Signature: t=<unix seconds>,v1=<hex
 * HMAC-SHA256 of "<t>.<raw body>" under the endpoint's secret>`. Core holds the format; the HMAC comes from the
 * caller (core imports no crypto module).
 */
export type HmacSha256Hex = (key: string, message: string) => string;

export const signatureHeader = (hmac: HmacSha256Hex, secret: string, body: string, at: Date): string => {
  const t = Math.floor(at.getTime() / 1000);
  return `t=${t},v1=${hmac(secret, `${t}.${body}`)}`;
};
