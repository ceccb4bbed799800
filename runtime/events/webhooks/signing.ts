// Standard Webhooks signing with the standardwebhooks library: webhook-id (the event id, stable across
// attempts and replays), webhook-timestamp (the send time, seconds) and webhook-signature, one
// `v1,<base64>` entry per valid secret (two during a rotation overlap).
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** A new signing secret: whsec_ + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export function signatureHeaders(eventId: string, body: string, secrets: readonly string[], at: Date = new Date()): Record<string, string> {
  if (secrets.length === 0) throw new Error('signatureHeaders: no secret');
  const signatures = secrets.map((secret) => new Webhook(secret).sign(eventId, at, body));
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}
