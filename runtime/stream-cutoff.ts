// A streamed response body whose producer may cut the connection off: an SSE stream whose reader
// stopped reading (events/stream.ts) cannot be ended by closing the body, since the transport waits for
// the socket to drain before it reads the body again, and a reader that never reads never drains it.
// The producer registers an AbortSignal with the body; the REST transport (http/rest) destroys the
// connection when it aborts.
const signals = new WeakMap<ReadableStream, AbortSignal>();

/** Marks `body` as one whose connection is destroyed when `signal` aborts; returns it. */
export function cutOffWith<T extends ReadableStream>(body: T, signal: AbortSignal): T {
  signals.set(body, signal);
  return body;
}

/** The signal registered for `body`, if any. */
export function cutOffSignal(body: ReadableStream): AbortSignal | undefined {
  return signals.get(body);
}
