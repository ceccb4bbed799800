// The traceparent stored with an event (events.traceparent, written by the emitter while tracing),
// read back when a webhook worker delivers the event: its attempt span then joins the trace of the
// request that emitted it. With tracing off nothing is read.
import { eq } from 'drizzle-orm';
import type { Db } from '../data/client.ts';
import { events } from '../data/schema.ts';
import { tracing } from './index.ts';

export async function eventTraceparent(db: Db, eventId: string): Promise<string | null> {
  if (!tracing) return null;
  const [row] = await db.select({ traceparent: events.traceparent }).from(events).where(eq(events.id, eventId));
  return row?.traceparent ?? null;
}
