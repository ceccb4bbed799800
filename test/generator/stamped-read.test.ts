// Reads of contract files by stamp (generator/stamped-read.ts): within one compile (withReads) a file
// whose stamp is unchanged is not read again, an edit that changes its stamp is seen, and outside such
// a compile every read is a read, however soon after the last one.
import { describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { readDigest, readText, withReads } from '../../generator/stamped-read.ts';
import { tempDir } from './helpers.ts';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

describe('stamped reads', () => {
  it('outside a compile, reads every time: a same-size edit at once after a read is seen', () => {
    const dir = tempDir('stamped');
    const file = path.join(dir.dir, 'a.yaml');
    writeFileSync(file, 'one: 1\n');
    expect(readDigest(file)).toBe(sha('one: 1\n'));
    expect(readText(file)).toBe('one: 1\n');
    writeFileSync(file, 'two: 2\n');
    expect(readDigest(file)).toBe(sha('two: 2\n'));
    expect(readText(file)).toBe('two: 2\n');
    dir.cleanup();
  });

  it('within a compile, the load takes the bytes the key read, and an edit that changes the stamp is seen', async () => {
    const dir = tempDir('stamped');
    const file = path.join(dir.dir, 'a.yaml');
    writeFileSync(file, 'one: 1\n');
    await withReads(async () => {
      expect(readDigest(file)).toBe(sha('one: 1\n'));
      expect(readText(file)).toBe('one: 1\n');
      // The same stamp: the digest is the remembered one (the text is not kept by a one-shot run).
      expect(readDigest(file)).toBe(sha('one: 1\n'));
      expect(readText(file)).toBe('one: 1\n');
      writeFileSync(file, 'three: 3\n');
      expect(readDigest(file)).toBe(sha('three: 3\n'));
      expect(readText(file)).toBe('three: 3\n');
    });
    // After the compile nothing is remembered: a same-size edit is read.
    writeFileSync(file, 'four: 4\n');
    expect(readText(file)).toBe('four: 4\n');
    await withReads(async () => {
      expect(readDigest(file)).toBe(sha('four: 4\n'));
      writeFileSync(file, 'five: 5\n');
    });
    expect(readDigest(file)).toBe(sha('five: 5\n'));
    dir.cleanup();
  });
});
