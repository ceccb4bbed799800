// The one JSON reader of both transports (REST bodies, MCP JSON-RPC messages). Strict where
// JSON.parse is loose: bytes that are not UTF-8 and an object naming a member twice are refused as
// malformed JSON (a proxy reading the first duplicate would see another request than we run), and
// nesting deeper than the contract's limits.maxJsonDepth is refused before any recursive work.
// Lone surrogates and U+0000 are kept here and refused by the validator (validate.ts
// checkInputValues), which names their JSON pointer on REST and MCP alike.
import { ProblemError } from '../problem-error.ts';
import { validationFailed } from './validate.ts';

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Bytes -> text; bytes that are not UTF-8 are 400 malformed_json (never replaced with U+FFFD). */
export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return decoder.decode(bytes);
  } catch {
    throw new ProblemError('malformed_json', 'The body is not valid UTF-8.');
  }
}

interface Frame {
  /** Member names seen so far (objects), null for arrays. */
  names: Set<string> | null;
  /** The pointer segment of the value being read in this container. */
  segment: string;
  index: number;
  expectName: boolean;
}

/** The pointer of the value being read, or (with `member`) of that member of the innermost object. */
function pointerOf(stack: readonly Frame[], member?: string): string {
  const parts = (member === undefined ? stack.slice(1) : stack.slice(1, -1)).map((f) => f.segment);
  if (member !== undefined) parts.push(member);
  return parts.map((p) => `/${escapePointer(p)}`).join('');
}

/**
 * Structure check of text that JSON.parse accepted: depth and duplicate member names. Iterative,
 * so it cannot overflow the stack whatever the nesting. `maxDepth` counts containers: the top-level
 * object is depth 1.
 */
function checkStructure(text: string, maxDepth: number): void {
  const stack: Frame[] = [{ names: null, segment: '', index: 0, expectName: false }];
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === 0x7b /* { */ || ch === 0x5b /* [ */) {
      if (stack.length > maxDepth) {
        throw validationFailed([{ pointer: pointerOf(stack), message: `nests deeper than ${maxDepth} levels (limits.maxJsonDepth)` }]);
      }
      const parent = stack[stack.length - 1]!;
      if (parent.names === null && stack.length > 1) parent.segment = String(parent.index);
      stack.push({ names: ch === 0x7b ? new Set() : null, segment: '0', index: 0, expectName: ch === 0x7b });
    } else if (ch === 0x7d /* } */ || ch === 0x5d /* ] */) {
      stack.pop();
    } else if (ch === 0x2c /* , */) {
      const top = stack[stack.length - 1]!;
      if (top.names) top.expectName = true;
      else top.segment = String(++top.index);
    } else if (ch === 0x22 /* " */) {
      let j = i + 1;
      let escaped = false;
      while (j < text.length && text.charCodeAt(j) !== 0x22) j += text.charCodeAt(j) === 0x5c ? 2 : 1;
      for (let k = i + 1; k < j && !escaped; k++) if (text.charCodeAt(k) === 0x5c) escaped = true;
      const top = stack[stack.length - 1]!;
      if (top.names && top.expectName) {
        const raw = text.slice(i, j + 1);
        const name = escaped ? (JSON.parse(raw) as string) : raw.slice(1, -1);
        if (top.names.has(name)) {
          throw new ProblemError('malformed_json', `The member ${pointerOf(stack, name).slice(0, 200)} appears twice in one object; send each name once.`); // not a contract limit: echo length
        }
        top.names.add(name);
        top.segment = name;
        top.expectName = false;
      }
      i = j;
    }
  }
}

/** Text -> value: 400 malformed_json for bad syntax or duplicate names, 422 past the depth limit. */
export function parseStrictJson(text: string, maxDepth: number): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ProblemError('malformed_json', `The body is not valid JSON: ${(err as Error).message.replace(/\s+/g, ' ').slice(0, 200)}`); // not a contract limit: echo length
  }
  if (value !== null && typeof value === 'object') checkStructure(text, maxDepth);
  return value;
}
