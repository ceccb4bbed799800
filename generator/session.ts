// What kind of process the compiler runs in. `svc generate --watch` compiles the same contract again
// and again: memos that cost more than they save on one compile (types.ts unit by unit on a small
// contract) pay from the second. startWatch sets longLived; every other command leaves it false.
export const session = { longLived: false };

/**
 * A memo keyed by object identity, for a watcher's compiles: the loader hands back the same parsed
 * file objects while a file's text is unchanged (load.ts), the model the same operation objects while
 * their family file and its environment are unchanged (model.ts), and each emitter keeps what it
 * derived from those objects. Outside a watcher it remembers nothing (one compile gains nothing and
 * would only hold memory). `forgetSessionMemos` empties every memo (tests compare an incremental
 * compile with a fresh one).
 */
export interface IdentityMemo<K extends object, V> {
  get(key: K): V | undefined;
  set(key: K, value: V): V;
}

const memos: { map: WeakMap<object, unknown> }[] = [];

export function identityMemo<K extends object, V>(): IdentityMemo<K, V> {
  const holder = { map: new WeakMap<object, unknown>() };
  memos.push(holder);
  return {
    get: (key) => (session.longLived ? (holder.map.get(key) as V | undefined) : undefined),
    set: (key, value) => {
      if (session.longLived) holder.map.set(key, value);
      return value;
    },
  };
}

/** Empties every identity memo and runs every registered forgetter (load.ts's parsed files, ...). */
export function forgetSessionMemos(): void {
  for (const holder of memos) holder.map = new WeakMap();
  for (const forget of forgetters) forget();
}

const forgetters: (() => void)[] = [];
/** Registers how a module's own memo (a Map, not an identity memo) is emptied by forgetSessionMemos. */
export function onForget(forget: () => void): void {
  forgetters.push(forget);
}
