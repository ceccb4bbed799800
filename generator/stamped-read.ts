// Reads of the contract's files by their stamp: a file whose size, modification and change times (to
// the nanosecond) and inode are those of the last read is not read again.
//
// `svc generate --watch` reads every file of the contract on each change (to hash the inputs, then to
// load them), of which one changed: 2,300 family files cost a stat each, 15 ms, against 65 ms of reads,
// twice per edit, and 14 MB not hashed again for the inputs' key (35 ms). A one-shot `svc generate`
// hashes the inputs, loads them, and hashes them again after the compile (a contract edited meanwhile
// records no cache entry): within that one compile (withReads), the load takes the bytes the first
// hash read (then lets them go), and the second hash stats each file instead of reading and hashing
// 14 MB again (8,200 operations: 0.3 s). Outside a watcher and such a compile, every read is a read:
// a file's times change by the kernel's tick (a few ms), so a same-size edit soon after a read could
// keep its stamp, which a watcher's human-paced edits never do but a script's or a test's might.
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { onForget, session } from './session.ts';

/** What was last read of a file: its bytes and text (a watcher keeps both; a one-shot run until loaded), its digest. */
interface Known {
  stamp: string;
  bytes?: Buffer;
  text?: string;
  digest?: string;
}

const known = new Map<string, Known>();
onForget(() => known.clear());

/** Whether reads are remembered now: in a watcher, or within withReads. */
let remembering = 0;

/** Runs `compile` remembering its reads by stamp, then forgets them (outside a watcher). */
export async function withReads<T>(compile: () => Promise<T>): Promise<T> {
  remembering++;
  try {
    return await compile();
  } finally {
    if (--remembering === 0 && !session.longLived) known.clear();
  }
}

function entry(file: string): Known {
  if (!session.longLived && !remembering) return { stamp: '' };
  const st = statSync(file, { bigint: true });
  const stamp = `${st.size}:${st.mtimeNs}:${st.ctimeNs}:${st.ino}`;
  const key = path.resolve(file);
  const last = known.get(key);
  if (last && last.stamp === stamp) return last;
  const fresh: Known = { stamp };
  known.set(key, fresh);
  return fresh;
}

const bytesOf = (e: Known, file: string): Buffer => (e.bytes ??= readFileSync(file));

/** A file's text (UTF-8). Outside a watcher the file's bytes and text are not kept once it is read. */
export function readText(file: string): string {
  const e = entry(file);
  if (session.longLived) return (e.text ??= bytesOf(e, file).toString('utf8'));
  const text = e.text ?? bytesOf(e, file).toString('utf8');
  e.bytes = undefined;
  return text;
}

/** The SHA-256 (hex) of a file's bytes. */
export function readDigest(file: string): string {
  const e = entry(file);
  return (e.digest ??= createHash('sha256').update(bytesOf(e, file)).digest('hex'));
}
