// A Server-Sent Events client for the tests: one frame per blank-line-ended block, with its id, event,
// data, retry and comment fields (events.stream, test/e2e/events-*.test.ts).
export interface Frame {
  id?: string;
  event?: string;
  data?: string;
  retry?: string;
  comment?: string;
}
export interface Sse {
  status: number;
  contentType: string | null;
  frames: Frame[];
  close(): void;
  /** Resolves when `n` event frames (with an id) arrived. */
  events(n: number, ms?: number): Promise<Frame[]>;
  /** Resolves when the server ended the stream (or it was closed). */
  ended: Promise<void>;
}
/** Opens `url` as an event stream with `credential` as its bearer; frames collect as they arrive. */
export async function openSse(url: string, credential: string, headers: Record<string, string> = {}): Promise<Sse> {
  const ac = new AbortController();
  const res = await fetch(url, { headers: { authorization: `Bearer ${credential}`, accept: 'text/event-stream', ...headers }, signal: ac.signal });
  const frames: Frame[] = [];
  let ended!: () => void;
  const sse: Sse = {
    ended: new Promise<void>((r) => (ended = r)),
    status: res.status,
    contentType: res.headers.get('content-type'),
    frames,
    close: () => ac.abort(),
    async events(n, ms = 5000) {
      const until = Date.now() + ms;
      while (frames.filter((f) => f.id).length < n) {
        if (Date.now() > until) throw new Error(`expected ${n} events, got ${frames.filter((f) => f.id).length}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return frames.filter((f) => f.id);
    },
  };
  if (res.status !== 200 || !res.body) {
    await res.body?.cancel();
    ended();
    return sse;
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += value;
        let at: number;
        while ((at = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, at);
          buffer = buffer.slice(at + 2);
          const frame: Frame = {};
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) frame.comment = line.slice(1).trim();
            else {
              const i = line.indexOf(':');
              (frame as Record<string, string>)[line.slice(0, i)] = line.slice(i + 1).trimStart();
            }
          }
          frames.push(frame);
        }
      }
    } catch {
      // aborted
    } finally {
      ended();
    }
  })();
  return sse;
}
