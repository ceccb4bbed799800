// The strict JSON reader (runtime/pipeline/json.ts) and the values rule (checkInputValues): the
// scanner must find duplicates and depth exactly, whatever strings and escapes hold.
import { describe, expect, it } from 'vitest';
import { decodeUtf8, parseStrictJson } from '../../runtime/pipeline/json.ts';
import { checkInputValues } from '../../runtime/pipeline/validate.ts';
import { ProblemError } from '../../runtime/problem-error.ts';

function refusal(fn: () => unknown): ProblemError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ProblemError) return err;
    throw err;
  }
  throw new Error('not refused');
}

describe('parseStrictJson', () => {
  it('parses what JSON.parse parses when names are unique', () => {
    const text = '{"a":"}{[\\"]","b":[1,{"c":"x"},{"c":"y"}],"d":{"a":1},"\\"":2}';
    expect(parseStrictJson(text, 64)).toEqual(JSON.parse(text));
    expect(parseStrictJson('"x"', 1)).toBe('x');
  });

  it('finds a duplicate name at its pointer, also behind strings holding brackets and escapes', () => {
    const e = refusal(() => parseStrictJson('{"a":"]}\\"{","b":[1,{"c":1,"c":2}]}', 64));
    expect(e.code).toBe('malformed_json');
    expect(e.detail).toContain('/b/1/c appears twice');
    expect(refusal(() => parseStrictJson('{"x":1,"\\u0078":2}', 64)).detail).toContain('/x appears twice');
    expect(refusal(() => parseStrictJson('{"a/b":{"~":1,"~":1}}', 64)).detail).toContain('/a~1b/~0 appears twice');
  });

  it('refuses nesting past the limit with the pointer where it passes it', () => {
    expect(parseStrictJson('[[[]]]', 3)).toEqual([[[]]]);
    const e = refusal(() => parseStrictJson('{"a":[{"b":[]}]}', 3));
    expect(e.code).toBe('validation_failed');
    expect(e.errors).toEqual([{ pointer: '/a/0/b', message: expect.stringContaining('deeper than 3') }]);
    expect(refusal(() => parseStrictJson('['.repeat(100_000) + ']'.repeat(100_000), 64)).code).toBe('validation_failed');
  });

  it('bad syntax and bytes that are not UTF-8 are malformed_json', () => {
    expect(refusal(() => parseStrictJson('{"a":', 64)).code).toBe('malformed_json');
    expect(refusal(() => decodeUtf8(Uint8Array.from([0x7b, 0xc3, 0x28, 0x7d]))).code).toBe('malformed_json');
    expect(decodeUtf8(new TextEncoder().encode('{"é":"😀"}'))).toBe('{"é":"😀"}');
  });
});

describe('checkInputValues', () => {
  it('names U+0000, lone surrogates, __proto__ and depth by pointer; accepts surrogate pairs', () => {
    const input = JSON.parse('{"a":"x\\u0000","b":["\\ud800",{"__proto__":1}],"c":"\\ud83d\\ude00","d\\u0000":1,"e":[[[]]]}');
    const errors = checkInputValues(input, 3);
    expect(errors).toHaveLength(5);
    expect(errors).toEqual(expect.arrayContaining([
      { pointer: '/a', message: 'must not contain the character U+0000' },
      { pointer: '/b/0', message: expect.stringContaining('lone UTF-16 surrogate') },
      { pointer: '/b/1/__proto__', message: expect.stringContaining('__proto__') },
      { pointer: '/d\u0000', message: expect.stringContaining('member name') },
      { pointer: '/e/0/0', message: expect.stringContaining('deeper than 3') },
    ]));
    expect(checkInputValues({ title: 'fine', n: 1, list: ['a', null, true] }, 64)).toEqual([]);
  });
});
