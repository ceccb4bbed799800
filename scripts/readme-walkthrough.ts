// The contract author's walkthrough (docs/contract-authors.md: "Adding an operation, step by step" and "The life
// of a change"), run for real: in a private copy of the project, the operation, field and changelog
// entry the document shows are added, the commands it names are run, and their output is compared
// with the document's sample outputs (test/governance/readme-walkthrough.test.ts).
//
// In the document, `<!-- walkthrough: NAME -->` on the line before a fenced block marks it: the
// inputs `operation`, `field` and `changelog` are read from it, every other NAME is a sample output.
// In a sample, a line `...` stands for any number of lines of the real output; dates (YYYY-MM-DD)
// compare equal to any date, since `svc diff` proposes today's.
//
//   node --import tsx scripts/readme-walkthrough.ts          check the samples
//   node --import tsx scripts/readme-walkthrough.ts --write  rewrite the samples (and the version
//                                                            numbers of the walkthrough) from the real output
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parse } from 'yaml';
import { ProjectCopy, type Run } from '../test/support/project-copy.ts';

/** The one file the walkthrough is read from (the contract authors' page; the README links it). */
export const WALKTHROUGH_DOC = 'docs/contract-authors.md';
export const SECTIONS = ['## Adding an operation, step by step', '## The life of a change (within /v1)'] as const;

export interface Block {
  name: string;
  /** The block's text, dedented, without its fences. */
  text: string;
  /** Offsets of the body in the document (between the fences). */
  start: number;
  end: number;
  indent: string;
}

/** The walkthrough sections of the document: from the first heading to the next heading of its level or above. */
export function walkthroughRange(doc: string): [number, number] {
  const start = doc.indexOf(SECTIONS[0]);
  if (start < 0) throw new Error(`${WALKTHROUGH_DOC} has no section "${SECTIONS[0]}"`);
  const second = doc.indexOf(SECTIONS[1], start);
  if (second < 0) throw new Error(`${WALKTHROUGH_DOC} has no section "${SECTIONS[1]}"`);
  const next = /\n#{1,2} /g;
  next.lastIndex = second + SECTIONS[1].length;
  const m = next.exec(doc);
  return [start, m ? m.index + 1 : doc.length];
}

export function blocks(doc: string): Map<string, Block> {
  const [from, to] = walkthroughRange(doc);
  const out = new Map<string, Block>();
  const marker = /<!-- walkthrough: ([a-z-]+) -->\n([ \t]*)```[a-z]*\n/g;
  marker.lastIndex = from;
  for (let m = marker.exec(doc); m && m.index < to; m = marker.exec(doc)) {
    const indent = m[2];
    const start = m.index + m[0].length;
    const end = doc.indexOf(`\n${indent}\`\`\``, start - 1) + 1;
    const body = doc.slice(start, end);
    const text = body
      .split('\n')
      .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l.trimStart()))
      .join('\n')
      .replace(/\n$/, '');
    out.set(m[1], { name: m[1], text, start, end, indent });
  }
  return out;
}

function nextMinor(version: string): string {
  const [major, minor] = version.split('.').map(Number);
  return `${major}.${minor + 1}.0`;
}

function output(run: Run): string {
  return `${run.stdout}${run.stderr}`.replace(/\s+$/, '').replace(/^\n+/, '');
}

export interface WalkthroughRun {
  version: string;
  next: string;
  /** Sample name -> what the command printed (stdout, then stderr). */
  outputs: Map<string, string>;
  /** Sample name -> exit status. */
  status: Map<string, number>;
}

/** The version of the contract in `contractDir` (read, never assumed). */
export function contractVersion(root = process.cwd()): string {
  return String((parse(readFileSync(`${root}/contract/svc.yaml`, 'utf8')) as { info: { version: string } }).info.version);
}

/** Runs the walkthrough of `doc` in private copies of the project under `root`. */
export function runWalkthrough(doc: string, root = process.cwd()): WalkthroughRun {
  const b = blocks(doc);
  const need = (name: string) => {
    const block = b.get(name);
    if (!block) throw new Error(`${WALKTHROUGH_DOC}: the walkthrough has no <!-- walkthrough: ${name} --> block`);
    return block.text;
  };
  const version = contractVersion(root);
  const next = nextMinor(version);
  const outputs = new Map<string, string>();
  const status = new Map<string, number>();
  const record = (name: string, run: Run) => {
    outputs.set(name, output(run));
    status.set(name, run.status);
  };

  // Adding an operation: the README's operation at the end of its family file.
  const a = new ProjectCopy(root);
  try {
    const op = need('operation');
    const family = (parse(op) as { id: string }[])[0].id.split('.')[0];
    const file = `contract/families/${family}.yaml`;
    a.write(file, `${a.read(file).replace(/\n*$/, '\n')}\n${op.replace(/^/gm, '  ')}\n`);
    const refused = a.svc('generate');
    record('generate-totals', refused);
    // Set each total to the count the error names, as the README says.
    let svc = a.read('contract/svc.yaml');
    for (const m of output(refused).matchAll(/totals\.(\w+) declares \d+ but the contract has (\d+)/g)) svc = svc.replace(new RegExp(`(\\n  ${m[1]}: )\\d+`), `$1${m[2]}`);
    a.write('contract/svc.yaml', svc);
    // The slip the README shows: an audience written as one word instead of a list.
    const withList = a.read(file);
    const opAt = withList.lastIndexOf(`- id: ${(parse(op) as { id: string }[])[0].id}`);
    a.write(file, withList.slice(0, opAt) + withList.slice(opAt).replace(/audience: \[[^\]]*\]/, 'audience: operator'));
    record('generate-slip', a.svc('generate'));
    a.write(file, withList);
    record('generate-ok', a.svc('generate'));
  } finally {
    a.cleanup();
  }

  // The life of a change: the README's field, then the version and the changelog entry it shows.
  const c = new ProjectCopy(root);
  try {
    const field = need('field');
    const target = /^# (\S+) input\.properties/m.exec(field)?.[1];
    if (!target) throw new Error(`${WALKTHROUGH_DOC}: the field block must start with "# <operation id> input.properties"`);
    const family = `contract/families/${target.split('.')[0]}.yaml`;
    const text = c.read(family);
    const opAt = text.indexOf(`- id: ${target}\n`);
    const propsAt = text.indexOf('      properties:\n', opAt) + '      properties:\n'.length;
    const lines = field.split('\n').filter((l) => !l.startsWith('#'));
    c.write(family, text.slice(0, propsAt) + lines.map((l) => `        ${l}\n`).join('') + text.slice(propsAt));
    record('diff-additive', c.svc('diff'));
    c.edit('contract/svc.yaml', `version: ${version}`, `version: ${next}`, 'info:');
    c.edit('contract/svc.yaml', 'changelog:\n', `changelog:\n${need('changelog').replace(/^/gm, '  ')}\n`);
    record('diff-ok', c.svc('diff'));
    record('release', c.svc('release'));
  } finally {
    c.cleanup();
  }
  return { version, next, outputs, status };
}

const normalize = (s: string) => s.replace(/\d{4}-\d{2}-\d{2}/g, 'YYYY-MM-DD');

/** Whether a sample (with `...` lines) matches the real output. */
export function sampleMatches(sample: string, actual: string): boolean {
  const want = normalize(sample).split('\n');
  const have = normalize(actual).split('\n');
  const match = (i: number, j: number): boolean => {
    if (i === want.length) return j === have.length;
    if (want[i].trim() === '...') {
      for (let k = j; k <= have.length; k++) if (match(i + 1, k)) return true;
      return false;
    }
    return j < have.length && want[i] === have[j] && match(i + 1, j + 1);
  };
  return match(0, 0);
}

/** Version numbers the walkthrough mentions that are neither the contract's nor the next minor. */
export function staleVersions(doc: string, version: string, next: string): string[] {
  const [from, to] = walkthroughRange(doc);
  return [...new Set(doc.slice(from, to).match(/\b\d+\.\d+\.\d+\b/g) ?? [])].filter((v) => v !== version && v !== next);
}

/** The document with every sample that no longer matches replaced by the real output, and stale versions updated. */
export function rewrite(doc: string, run: WalkthroughRun): string {
  let next = doc;
  // The versions the document was written for, from its diff sample: "says X, ... Set info.version: Y".
  const was = /says (\d+\.\d+\.\d+), which does not raise the minor over \S+ Set info\.version: (\d+\.\d+\.\d+)\./.exec(blocks(doc).get('diff-additive')?.text ?? '');
  if (was && (was[1] !== run.version || was[2] !== run.next)) {
    const [from, to] = walkthroughRange(next);
    const map = new Map([[was[1], run.version], [was[2], run.next]]);
    next = next.slice(0, from) + next.slice(from, to).replace(/\b\d+\.\d+\.\d+\b/g, (v) => map.get(v) ?? v) + next.slice(to);
  }
  const list = [...blocks(next).values()].filter((b) => run.outputs.has(b.name)).sort((x, y) => y.start - x.start);
  for (const b of list) {
    const actual = run.outputs.get(b.name)!;
    if (sampleMatches(b.text, actual)) continue;
    next = next.slice(0, b.start) + actual.split('\n').map((l) => (l ? `${b.indent}${l}` : '')).join('\n') + '\n' + next.slice(b.end);
  }
  return next;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const doc = readFileSync(WALKTHROUGH_DOC, 'utf8');
  let fixed = rewrite(doc, runWalkthrough(doc));
  // The walkthrough's inputs (the changelog entry it adds) carry the version too: once the versions
  // were moved, run it again on the moved text so its outputs are those of the new inputs.
  if (process.argv.includes('--write') && fixed !== doc) fixed = rewrite(fixed, runWalkthrough(fixed));
  if (process.argv.includes('--write')) {
    writeFileSync(WALKTHROUGH_DOC, fixed);
    console.log(fixed === doc ? `${WALKTHROUGH_DOC}: the walkthrough's samples match.` : `${WALKTHROUGH_DOC}: rewrote the walkthrough's samples from the real output.`);
  } else {
    console.log(fixed === doc ? `${WALKTHROUGH_DOC}: the walkthrough's samples match.` : `${WALKTHROUGH_DOC}: samples differ from the real output; run with --write.`);
    process.exitCode = fixed === doc ? 0 : 1;
  }
}
