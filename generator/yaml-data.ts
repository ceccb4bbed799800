// A contract file's data, fast: js-yaml reads plain YAML about ten times faster than the `yaml`
// library's parseDocument + toJS (9 MB of family files at 8,200 operations: 0.2 s against 2.1 s), but
// the two do not agree on everything. The `yaml` library stays the reference (load.ts): it reports
// every syntax error with its position and gives every node's position for the checks' diagnostics.
// js-yaml's data is used only where the two are known to agree, and the answer is null (parse with
// `yaml`) when the file has anything else:
//
// - a syntax error js-yaml sees (the `yaml` parse then reports it, or reads the file itself);
// - an anchor or a tag (aliases, and `yaml`'s limit on them; tags each library resolves its own way);
// - a flow collection, a quoted or a plain scalar spanning lines with a continuation line not indented
//   past the block collection it is in: js-yaml accepts what `yaml` refuses (an unclosed
//   `{ ... "` wrapped to the next line), and a tab among the indentation;
// - a comment right after a closing bracket or quote (`}#`), which `yaml` refuses;
// - a key that is not a plain string: a collection (`[a, b]: x`, `? {a: b}`) or null (`: x`, `~: x`),
//   which the two turn into different strings; an explicit key (`? `) and a directive (`%YAML 1.1`
//   gives `yaml` another schema) anywhere;
//
// and scalars resolve by the `yaml` library's YAML 1.2 core schema (its int, hex, octal and float
// forms exactly), not js-yaml's wider one (`0b1`, `-0x1`, `1_000`). test/generator/yaml-data.test.ts
// compares both on the real contract and on thousands of mutations of it.
import jsYaml from 'js-yaml';

/** The `yaml` library's core-schema scalars (yaml/dist/schema/core): the same tests, the same values. */
const scalar = (tag: string, test: RegExp, construct: (text: string) => unknown) =>
  new jsYaml.Type(`tag:yaml.org,2002:${tag}`, { kind: 'scalar', resolve: (text: string | null) => text !== null && test.test(text), construct });

const CORE = jsYaml.FAILSAFE_SCHEMA.extend({
  implicit: [
    scalar('null', /^(?:~|[Nn]ull|NULL)?$/, () => null),
    scalar('bool', /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/, (text) => text[0] === 't' || text[0] === 'T'),
    scalar('int', /^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$/, (text) =>
      text.startsWith('0o') ? parseInt(text.slice(2), 8) : text.startsWith('0x') ? parseInt(text.slice(2), 16) : parseInt(text, 10),
    ),
    scalar('float', /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+|[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*))$/, (text) =>
      /nan$/i.test(text) ? NaN : /inf$/i.test(text) ? (text[0] === '-' ? -Infinity : Infinity) : parseFloat(text),
    ),
  ],
});

/** js-yaml's loader state, as its listener sees it (the fields read here). */
interface LoaderState {
  position: number;
  line: number;
  kind: string | null;
  result: unknown;
}

const SPACE = /[ \t\r\n]/;

/** The file's data when js-yaml reads it as the `yaml` library would; null when only `yaml` may say. */
export function fastYamlData(text: string): { data: unknown } | null {
  // A directive (%YAML 1.1 switches `yaml` to another schema) and an explicit key (`? ...`, which
  // may be a collection) are left to `yaml`.
  if (/^%/m.test(text) || /(?:^|[\s,[{])\?(?:\s|$)/m.test(text)) return null;
  let doubtful = false;
  // Each open node's first character's offset and line (js-yaml calls the listener on open and close).
  const opened: number[] = [];
  let data: unknown;
  try {
    data = jsYaml.load(text, {
      schema: CORE,
      listener(event: 'open' | 'close', state: LoaderState) {
        if (event === 'open') {
          opened.push(skipSpace(text, state.position), state.line);
          return;
        }
        const line = opened.pop()!;
        const start = opened.pop()!;
        const first = text[start];
        if (first === '&' || first === '!' || first === '*' || first === '?' || (text[state.position] === '#' && /[\]}"']/.test(text[state.position - 1]!))) doubtful = true;
        else if (state.line > line && first !== '|' && first !== '>' && (state.kind === 'scalar' || first === '[' || first === '{')) {
          // A scalar or flow collection over several lines: its continuation lines indented deeper
          // than the block collection it is in (its parent node's column), as `yaml` requires.
          // (js-yaml opens a node twice where it might be a key: `- "text"` may begin `- "text": x`.)
          let enclosing = opened.length - 2;
          while (enclosing >= 0 && opened[enclosing] === start) enclosing -= 2;
          const parent = enclosing >= 0 ? opened[enclosing]! : -1;
          if (parent < 0 || !indentedPast(text, start, state.position, parent - text.lastIndexOf('\n', parent - 1) - 1)) doubtful = true;
        } else if (text[skipSpace(text, state.position)] === ':' && (state.result === null || typeof state.result === 'object')) doubtful = true;
      },
    });
  } catch {
    return null;
  }
  // An empty document is null to `yaml`, undefined to js-yaml.
  return doubtful || hasNullKey(data) ? null : { data: data === undefined ? null : data };
}

function skipSpace(text: string, at: number): number {
  while (at < text.length && SPACE.test(text[at]!)) at++;
  return at;
}

/** Whether every non-blank line begun within text[from, to) is indented by spaces past `column`. */
function indentedPast(text: string, from: number, to: number, column: number): boolean {
  for (let nl = text.indexOf('\n', from); nl !== -1 && nl < to; nl = text.indexOf('\n', nl + 1)) {
    let at = nl + 1;
    while (text[at] === ' ') at++;
    const next = text[at];
    if (next === '\t') return false;
    if (next !== '\n' && next !== '\r' && at - nl - 1 <= column) return false;
  }
  return true;
}

/** Whether any mapping has the key `null` (js-yaml's name for a null key; `yaml` names it ""). */
function hasNullKey(value: unknown): boolean {
  if (!value || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some(hasNullKey);
  for (const key in value) if (key === 'null' || hasNullKey((value as Record<string, unknown>)[key])) return true;
  return false;
}
