// Requests and checks shared by the fleet suites (test/fleet/*.test.ts).
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';

export interface Answer {
  status: number;
  body: Record<string, unknown>;
}

export async function call(base: string, credential: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${credential}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    parsed = { text };
  }
  return { status: res.status, body: parsed };
}

/** POST /v1/tasks with a fresh (or the given) Idempotency-Key. */
export function createTask(base: string, credential: string, task: { title: string; clientId: string }, key: string = randomUUID()): Promise<Answer> {
  return call(base, credential, 'POST', '/v1/tasks', task, { 'idempotency-key': key });
}

export function idOf(answer: Answer): string {
  return (answer.body.result as { id: string }).id;
}

/** How long until `credential` is refused (401) on `base`, polling every 20 ms; Infinity after `ms`. */
export async function refusedWithin(base: string, credential: string, ms: number): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < ms) {
    const res = await fetch(`${base}/v1/meta`, { headers: { authorization: `Bearer ${credential}` } });
    await res.arrayBuffer();
    if (res.status === 401) return Date.now() - started;
    await new Promise((r) => setTimeout(r, 20));
  }
  return Infinity;
}

export async function until(fn: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Runs `n` workers over `items`, each taking the next item until none is left. */
export async function pool<T, R>(items: T[], n: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!);
      }
    }),
  );
  return out;
}

export function expectStatus(answer: Answer, status: number): void {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
}
