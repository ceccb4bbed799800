// The outbound-message outbox: messages leaving the service (an API's sends) are rows of
// outbound_messages, written in the transaction of the approved write, so a dry run, a pre-flight
// or a rolled-back write never sends anything. A delivery loop sends due rows after commit:
//
// - It runs only when a sender is configured: SVC_SMTP_URL (nodemailer) sends the e-mail channel.
//   Without it, and for channels no sender handles (sms), rows stay queued, and so does their
//   operation (running) until a sender is configured.
// - No transaction is open while a message is sent (a slow SMTP server would hold back every tenant's
//   events): a short transaction claims a batch (FOR UPDATE SKIP LOCKED) and leases it by moving its
//   `not_before` LEASE_MS ahead, commits; each message is sent; each outcome is recorded in a statement of
//   its own. Several instances never claim one message at once; each instance runs one pass at a time.
// - Delivery is at least once: a message whose sender died after sending, before recording, is due
//   again when its lease ends, and is sent again. Each send is bounded (SMTP_TIMEOUTS), so a batch
//   ends well within its lease.
// - A message that fails is retried on later passes, at most MAX_ATTEMPTS times, then failed.
// - When an operation has no queued message left it succeeds (result: sent and failed counts). What
//   the messages came from follows through the API's hooks (Registry.outbox, OutboxHooks), which
//   hear each operation's end and each scheduled send's time.
import nodemailer from 'nodemailer';
import { and, eq, inArray, lte, sql } from 'drizzle-orm';
import type { Database, Db } from '../data/client.ts';
import { errorSummary, logLine } from '../observability/log.ts';
import { operations, outboundMessages } from '../data/schema.ts';

export const MAX_ATTEMPTS = 5;
const BATCH = 10; // not a contract limit: messages claimed per transaction
/** How long a claimed batch is leased to its sender: BATCH sends at their bound, and more. */
export const LEASE_MS = 10 * 60_000; // not a contract limit
/** nodemailer's bounds of one send (its socket default is 10 minutes): BATCH x their sum stays under LEASE_MS. */
export const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 }; // not a contract limit

export interface OutboundMessage {
  id: string;
  channel: string;
  recipient: string;
  subject: string;
  body: string;
}

export interface Sender {
  /** Channels this sender delivers (e.g. ['email']); other rows stay queued. */
  channels: readonly string[];
  send(message: OutboundMessage): Promise<void>;
}

/**
 * E-mail through nodemailer: an SMTP URL (smtp://user:pass@host:587), or any nodemailer transport
 * options. Each send is bounded by SMTP_TIMEOUTS unless `timeouts` (or the options) say otherwise.
 */
export function mailSender(
  transport: string | Parameters<typeof nodemailer.createTransport>[0],
  from: string,
  timeouts: Partial<typeof SMTP_TIMEOUTS> = {},
): Sender {
  const bounds = { ...SMTP_TIMEOUTS, ...timeouts };
  // A URL's own query (?socketTimeout=…) still wins: nodemailer merges the object's keys under it.
  const mailer = nodemailer.createTransport((typeof transport === 'string' ? { url: transport, ...bounds } : { ...bounds, ...(transport as object) }) as never);
  return {
    channels: ['email'],
    async send(m) {
      await mailer.sendMail({ from, to: m.recipient, subject: m.subject, text: m.body });
    },
  };
}

/** What is kept of a send failure: the error's message, cut to 500 characters (an SMTP reply names no body). */
function failureText(err: unknown): string {
  return err instanceof Error ? err.message.slice(0, 500) : 'send failed';
}

/** What an API does as the outbox settles its operations (Registry.outbox). */
export interface OutboxHooks {
  /** First in each settle, before the finished operations are settled (sources whose time came, say). */
  settling?(db: Db, now: Date): Promise<void>;
  /** In the transaction in which an operation whose messages are all out succeeded. */
  operationDone?(tx: Db, operationId: string, now: Date): Promise<void>;
}

export interface DeliveryReport {
  sent: number;
  failed: number;
  retried: number;
}

/** One delivery pass: sends due queued messages of the sender's channels and settles finished operations. */
export async function deliverDue(database: Database, sender: Sender, now = new Date(), hooks: OutboxHooks = {}): Promise<DeliveryReport> {
  const report: DeliveryReport = { sent: 0, failed: 0, retried: 0 };
  const touched = new Set<string>();
  for (;;) {
    const due = await claimBatch(database, sender, now);
    let retriedNow = 0;
    for (const m of due) {
      if (m.operationId) touched.add(m.operationId);
      const outcome = await sendOne(sender, m);
      await record(database, m, outcome);
      if (outcome === null) report.sent++;
      else if (m.attempts + 1 >= MAX_ATTEMPTS) report.failed++;
      else {
        report.retried++;
        retriedNow++;
      }
    }
    // A short batch is the last; a batch with retries ends the pass (they are retried on the next one).
    if (due.length < BATCH || retriedNow > 0) break;
  }
  await settle(database, touched, now, hooks);
  return report;
}

/** Claims up to BATCH due messages: locked, leased (not_before moved LEASE_MS ahead), committed. */
async function claimBatch(database: Database, sender: Sender, now: Date) {
  return database.transaction(async (tx) => {
    const due = await tx
      .select()
      .from(outboundMessages)
      .where(and(eq(outboundMessages.status, 'queued'), lte(outboundMessages.notBefore, now), inArray(outboundMessages.channel, [...sender.channels])))
      .orderBy(outboundMessages.notBefore, outboundMessages.id)
      .limit(BATCH)
      .for('update', { skipLocked: true });
    if (due.length > 0) {
      await tx
        .update(outboundMessages)
        .set({ notBefore: new Date(now.getTime() + LEASE_MS) })
        .where(inArray(outboundMessages.id, due.map((m) => m.id)));
    }
    return due;
  });
}

/** Sends one message outside any transaction: null when it went, else why not. */
async function sendOne(sender: Sender, m: typeof outboundMessages.$inferSelect): Promise<string | null> {
  try {
    await sender.send({ id: m.id, channel: m.channel, recipient: m.recipient, subject: m.subject, body: m.body });
    return null;
  } catch (err) {
    return failureText(err);
  }
}

/** Records a send's outcome (one statement): sent; queued again, due as before the lease; or failed after MAX_ATTEMPTS. */
async function record(database: Database, m: typeof outboundMessages.$inferSelect, failure: string | null): Promise<void> {
  const attempts = m.attempts + 1;
  // A retry is due again from its former time (the lease ends); a sent or failed row keeps it too.
  const set: Partial<typeof outboundMessages.$inferInsert> =
    failure === null
      ? { status: 'sent', attempts, sentAt: new Date(), lastError: null, notBefore: m.notBefore }
      : { status: attempts >= MAX_ATTEMPTS ? 'failed' : 'queued', attempts, lastError: failure, notBefore: m.notBefore };
  await database.db.update(outboundMessages).set(set).where(eq(outboundMessages.id, m.id));
}

/** Moves operations whose messages are all out to their end state (and, through the hooks, what they came from). */
async function settle(database: Database, operationIds: Set<string>, now: Date, hooks: OutboxHooks): Promise<void> {
  await hooks.settling?.(database.db, now);

  for (const id of operationIds) {
    await database.transaction(async (tx) => {
      const [counts] = await tx
        .select({
          total: sql<string>`count(*)::text`,
          queued: sql<string>`count(*) filter (where ${outboundMessages.status} = 'queued')::text`,
          sent: sql<string>`count(*) filter (where ${outboundMessages.status} = 'sent')::text`,
          failed: sql<string>`count(*) filter (where ${outboundMessages.status} = 'failed')::text`,
        })
        .from(outboundMessages)
        .where(eq(outboundMessages.operationId, id));
      const total = Number(counts?.total ?? 0);
      const queued = Number(counts?.queued ?? 0);
      const progress = total === 0 ? 100 : Math.floor(((total - queued) * 100) / total);
      if (queued > 0) {
        await tx.update(operations).set({ progress, updatedAt: now }).where(and(eq(operations.id, id), eq(operations.status, 'running')));
        return;
      }
      const result = { sent: Number(counts?.sent ?? 0), failed: Number(counts?.failed ?? 0) };
      const [op] = await tx
        .update(operations)
        .set({ status: 'succeeded', progress: 100, result, updatedAt: now, finishedAt: now })
        .where(and(eq(operations.id, id), inArray(operations.status, ['queued', 'running'])))
        .returning();
      if (op) await hooks.operationDone?.(tx, id, now);
    });
  }
}

/** Runs deliverDue every intervalMs, one pass at a time; stop() ends it (and waits for a pass in flight). */
export function startDeliveryLoop(
  database: Database,
  sender: Sender,
  /** log takes runtime/observability/log.ts lines (logLine). */
  options: { intervalMs?: number; log?: (line: string) => void; hooks?: OutboxHooks } = {},
): { stop(): Promise<void> } {
  let running: Promise<void> | null = null;
  const tick = () => {
    if (running) return;
    running = deliverDue(database, sender, new Date(), options.hooks)
      .then((r) => {
        if (r.sent + r.failed + r.retried > 0) options.log?.(logLine('info', 'outbox_delivered', { sent: r.sent, retried: r.retried, failed: r.failed }));
      })
      .catch((err) => options.log?.(logLine('error', 'outbox_pass_failed', { error: errorSummary(err) })))
      .finally(() => {
        running = null;
      });
  };
  const timer = setInterval(tick, options.intervalMs ?? 5_000);
  timer.unref?.();
  tick();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
