// events.*: the outbox read as a feed (events.list) and followed as SSE (events.stream, runtime/events/stream.ts).
// Visibility through runtime/events/feed.ts: an OAuth operator sees its clients' and internal events;
// client admins and every API key only their clients' events.
import type { HandlerContext, Page } from '../runtime/handler-types.ts';
import { eventsAfter, resumeSeq, seqOfVisibleEvent, startFeedPage, toFeedEvent, type EventRow } from '../runtime/events/feed.ts';
import { openEventStream } from '../runtime/events/stream.ts';
import { cutPage } from '../runtime/data/paging.ts';
import { operationsById, service } from '../generated/registry.ts';
import type { EventsHandlers } from '../generated/handlers/events.ts';
import type { components } from '../generated/types.ts';

type EventsListInput = components['schemas']['EventsListInput'];
type EventsStreamInput = components['schemas']['EventsStreamInput'];
type EventsStreamOutput = components['schemas']['EventsStreamOutput'];
type Event = components['schemas']['Event'];

/** The feed's event (the runtime types its type as a string), as the contract's: the feed holds only emitted types. */
const toEvent = (row: EventRow): Event => toFeedEvent(row) as Event;

async function list(input: EventsListInput, ctx: HandlerContext): Promise<Page<Event>> {
  const { types, clientId, since, after } = input;
  // A clientId outside the caller's reach answers 404, like every client-scoped filter.
  if (clientId !== undefined) ctx.policy.assertClientInScope(clientId);
  const filters = { types: types ? [...types].sort() : undefined, clientId, since, after };
  const page = await startFeedPage(ctx.db, input, filters);
  let afterSeq = page.afterSeq;
  if (afterSeq === null) afterSeq = after !== undefined ? await seqOfVisibleEvent(ctx.db, ctx.policy, after) : 0;
  const rows = await eventsAfter(ctx.db, ctx.policy, { types, clientId, since }, afterSeq, page.pageSize + 1);
  return cutPage(rows, page.pageSize, toEvent, (last) => page.cursorFor(Number(last.seq)));
}

/**
 * The SSE body (the REST layer sends a ReadableStream as text/event-stream). Last-Event-ID arrives as
 * `after`; one whose event retention purged resumes after the purge boundary (feed.ts resumeSeq).
 */
async function stream(input: EventsStreamInput, ctx: HandlerContext): Promise<EventsStreamOutput> {
  const { types, clientId, after } = input;
  if (clientId !== undefined) ctx.policy.assertClientInScope(clientId);
  const afterSeq = after !== undefined ? await resumeSeq(ctx.db, ctx.policy, after) : null;
  const body = await openEventStream({
    db: ctx.db,
    principal: ctx.principal,
    filters: { types, clientId },
    afterSeq,
    // An OAuth stream ends with its access token; every stream re-checks its principal by the live rules.
    expiresAt: ctx.principal.expiresAt ?? null,
    rules: { scopes: service.scopes, roleScopes: service.roleScopes },
    scope: operationsById['events.stream']?.scope ?? undefined,
  });
  // The contract types the stream by its messages (Event); the transport sends the stream itself.
  return body as unknown as EventsStreamOutput;
}

export const eventsHandlers = {
  'events.list': list,
  'events.stream': stream,
} satisfies EventsHandlers;
