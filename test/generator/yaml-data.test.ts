// The fast YAML data path (generator/yaml-data.ts): js-yaml's data is used only where it equals the
// `yaml` library's, and every file it cannot vouch for is left to `yaml` (null). Compared on the real
// contract, on a synthetic one (wrapped multi-line descriptions), on each known disagreement between
// the two libraries, and on seeded mutations of the contract's files.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { fastYamlData } from '../../generator/yaml-data.ts';
import { synthContract } from '../../scripts/synth-contract.ts';
import { CONTRACT_DIR, tempDir } from './helpers.ts';

/** The `yaml` library's data (load.ts's options), or undefined when it reports an error. */
function yamlData(text: string): { data: unknown } | undefined {
  const doc = parseDocument(text, { uniqueKeys: true });
  if (doc.errors.length) return undefined;
  try {
    return { data: doc.toJS({ maxAliasCount: 1000 }) };
  } catch {
    return undefined;
  }
}

function contractTexts(dir: string): string[] {
  const files = ['families', 'schemas'].flatMap((sub) => readdirSync(path.join(dir, sub)).map((f) => path.join(dir, sub, f)));
  return [path.join(dir, 'svc.yaml'), ...files].map((f) => readFileSync(f, 'utf8'));
}

describe('fastYamlData', () => {
  it("reads every file of the real and a synthetic contract, with the yaml library's data", () => {
    const { dir, cleanup } = tempDir('yaml-data');
    try {
      const synth = synthContract(2, CONTRACT_DIR, path.join(dir, 'contract'));
      const texts = [...contractTexts(CONTRACT_DIR), ...contractTexts(synth)];
      // The synthetic contract wraps long descriptions over several lines.
      expect(texts.some((t) => /description: [^\n]*\n {6,}[a-z]/.test(t))).toBe(true);
      for (const text of texts) {
        const fast = fastYamlData(text);
        expect(fast, text.slice(0, 300)).not.toBeNull();
        expect(fast!.data).toEqual(yamlData(text)!.data);
      }
    } finally {
      cleanup();
    }
  });

  it('resolves scalars by the yaml library\'s core schema', () => {
    const text = [
      'a: 0b11', 'b: -0x1F', 'c: 0x1F', 'd: 0o17', 'e: 1_000', 'f: -.5', 'g: .5', 'h: 1e3', 'i: -.inf', 'j: .NaN',
      'k: 1.50', 'l: +12', 'm: 012', 'n: True', 'o: yes', 'p: ~', 'q: NULL', 'r: 2024-01-01', 's: 1e400', 't: 12345678901234567890',
      'u: "quoted"', "v: 'single'", 'w: <<', 'x: -0', 'y:', 'z: [1, two, 3.0]',
    ].join('\n');
    expect(fastYamlData(text)!.data).toEqual(yamlData(text)!.data);
    expect(fastYamlData('')).toEqual({ data: null });
    expect(fastYamlData('# only a comment\n')).toEqual({ data: null });
  });

  it('leaves to the yaml library what the two read differently', () => {
    const left = [
      'x: &a [1]\ny: *a', // anchors and aliases
      'x: !!int "3"', // tags
      'x: !custom 3',
      'a:\n  b: { c: "one\n two" }', // a continuation line not indented past its block mapping
      'a:\n  b: [one,\n  two]',
      'a:\n  b: one\n  two', // a plain scalar continued at its key's column
      'a:\n  b: one\n\ttwo',
      'a: { b: 1 }#c', // a comment touching a closing bracket
      'a: "b"#c',
      '? [a, b]\n: 1', // explicit and collection keys
      '? { a: b }',
      '[a, b]: 1',
      '{ a: 1 }: 2',
      '~: 1', // null keys
      'x: [a, : b]',
      '%YAML 1.1\n---\nx: yes', // a directive
      'a: 1\na: 2', // duplicate keys (js-yaml's error; yaml reports it)
      'a: [1, 2', // syntax errors
      'a: 1\n---\nb: 2',
    ];
    for (const text of left) expect(fastYamlData(text), text).toBeNull();
  });

  it('never gives data the yaml library would not: seeded mutations of the contract files', () => {
    const texts = contractTexts(CONTRACT_DIR);
    const inserts = ['\t', ':', ' ', "'", '"', '-', '[', ']', '{', '}', '#', '?', '&a ', '*a', '!', '|', '>', '\n', '\n  ', ',', '%', '---\n', ': ', ' #', '- ', '~: ', '0x1F', '-.5', '0b11', '? '];
    let seed = 20261127;
    const random = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    let fast = 0;
    for (let i = 0; i < 400; i++) {
      let text = texts[Math.floor(random() * texts.length)]!;
      for (let k = 1 + Math.floor(random() * 2); k > 0; k--) {
        const at = Math.floor(random() * text.length);
        const op = random();
        if (op < 0.3) text = text.slice(0, at) + text.slice(at + 1);
        else if (op < 0.9) text = text.slice(0, at) + inserts[Math.floor(random() * inserts.length)] + text.slice(at);
        else {
          const line = text.lastIndexOf('\n', at) + 1;
          text = `${text.slice(0, line)} ${text.slice(line)}`;
        }
      }
      const answer = fastYamlData(text);
      if (!answer) continue;
      fast++;
      const reference = yamlData(text);
      expect(reference, `the yaml library refuses what js-yaml read:\n${text}`).toBeDefined();
      expect(answer.data, text).toEqual(reference!.data);
    }
    expect(fast).toBeGreaterThan(100);
  });
});
