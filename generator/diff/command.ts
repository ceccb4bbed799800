// `svc diff` command: runs the engine against the newest release snapshot (or a git ref or file) and
// applies the policy: breaking fails with the way out, additive needs the minor raised and a
// changelog entry.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { OperationDef } from '../../runtime/contract-types.ts';
import { displayPath } from '../load.ts';
import { ContractError, type JsonPath } from '../source.ts';
import {
  compileContract,
  consoleIo,
  parseArgs,
  parseVersion,
  releaseFiles,
  snapshotSide,
  type CliIo,
  type Side,
} from '../snapshot.ts';

import type { Finding } from './rules.ts';
import { diffContracts } from './engine.ts';

// ---------------------------------------------------------------------------------------------
// Policy: what each classification requires.

export interface Verdict {
  exitCode: 0 | 1;
  lines: string[];
}

function today(): string {
  return new Date().toISOString().slice(0, 10);
}

/**
 * Breaking changes fail with the way out (/v2 beside /v1). Additive ones need the minor raised over
 * the base and a changelog entry for the new version (Deprecated / Removed filled in when due).
 */
export function verdict(base: Side, head: Side, findings: Finding[], svcLocation: (path: JsonPath) => string | null = (p) => head.locate({ kind: 'svc', key: '', path: p })): Verdict {
  const lines: string[] = [];
  const bv = base.snapshot.contractVersion;
  const hv = head.snapshot.contractVersion;
  for (const f of findings) lines.push(`${f.location} ${f.kind} [${f.rule}] ${f.subject}: ${f.message}`);
  const breaking = findings.filter((f) => f.kind === 'breaking');
  const additive = findings.filter((f) => f.kind === 'additive');
  if (!findings.length) {
    lines.push(`svc diff: no contract changes against ${base.label} (${bv}); head is ${hv}.`);
    return { exitCode: 0, lines };
  }
  let failed = false;
  if (breaking.length) {
    failed = true;
    lines.push(
      '',
      `svc diff: ${breaking.length} breaking change(s) against ${base.label} (${bv}). /v1 only ever changes additively (spec, Versioning 2-4).`,
      'Way out: undo the change in /v1 and ship the new shape as /v2 beside it:',
      '  1. add the changed operations again under /v2/... paths (new ids, e.g. tasks.v2.update), leaving the /v1 ones exactly as released;',
      `  2. mark each replaced /v1 operation deprecated: {since, sunset, link, successor, successorLink}, with sunset at least ${'six'} months (limits.priorMajorMinimumMonths) after /v2 ships;`,
      '  3. add {version: v2, status: current, released: <date>} to svc.yaml versions, raise info.version, and list the additions under added and the deprecations under deprecated in the changelog.',
    );
  }
  const hp = parseVersion(hv);
  const bp = parseVersion(bv);
  if (additive.length && hp && bp) {
    const raised = hp[0] > bp[0] || (hp[0] === bp[0] && hp[1] > bp[1]);
    const next = `${bp[0]}.${bp[1] + 1}.0`;
    const versionAt = svcLocation(['info', 'version']) ?? 'contract/svc.yaml';
    const changelogAt = svcLocation(['changelog']) ?? 'contract/svc.yaml';
    const want = raised ? hv : next;
    const entry = head.snapshot.changelog.find((c) => c.version === want);
    const added = additive.filter((f) => !['operation-deprecated', 'version-deprecated', 'operation-withdrawn'].includes(f.rule));
    const deprecated = additive.filter((f) => f.rule === 'operation-deprecated' || f.rule === 'version-deprecated');
    const withdrawn = additive.filter((f) => f.rule === 'operation-withdrawn');
    if (!raised) {
      failed = true;
      lines.push('', `svc diff: ${additive.length} additive change(s) need a minor release: ${versionAt} says ${hv}, which does not raise the minor over ${bv}. Set info.version: ${next}.`);
    }
    const entryProblems: string[] = [];
    if (!entry) entryProblems.push(`there is no changelog entry for ${want}`);
    else {
      if (added.length && !entry.added.length) entryProblems.push(`its added list is empty`);
      if (deprecated.length && !entry.deprecated.length) entryProblems.push(`its deprecated list is empty (every deprecation is announced there)`);
      if (withdrawn.length && !entry.removed.length) entryProblems.push(`its removed list is empty (every withdrawal is listed there)`);
    }
    if (entryProblems.length) {
      failed = true;
      const q = (s: string) => JSON.stringify(s);
      lines.push(
        '',
        `svc diff: the changelog (${changelogAt}) must describe ${want}: ${entryProblems.join('; ')}. Add at the top of changelog:`,
        `  - version: ${want}`,
        `    date: "${today()}"`,
        `    added: [${added.map((f) => q(`${f.subject}: ${f.message}`)).join(', ')}]`,
        `    deprecated: [${deprecated.map((f) => q(f.message)).join(', ')}]`,
        `    removed: [${withdrawn.map((f) => q(f.message)).join(', ')}]`,
      );
    }
  }
  if (!failed) lines.push(`svc diff: ${additive.length} additive change(s) against ${base.label} (${bv}); ${hv} raises the minor and its changelog entry is in place.`);
  return { exitCode: failed ? 1 : 0, lines };
}

/** Compiles the contract as it was at a git ref (git archive into a temporary directory). */
export function compileAtRef(ref: string, contractDir: string): Side & { cleanup(): void } {
  const root = execFileSync('git', ['-C', path.resolve(contractDir), 'rev-parse', '--show-toplevel'], { encoding: 'utf8' }).trim();
  const rel = path.relative(realpathSync(root), realpathSync(path.resolve(contractDir))).split(path.sep).join('/');
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-diff-'));
  try {
    const tar = execFileSync('git', ['-C', root, 'archive', '--format=tar', ref, '--', rel || '.'], { maxBuffer: 1 << 30 });
    execFileSync('tar', ['-x', '-C', tmp], { input: tar });
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    throw new Error(`Cannot read ${rel || '.'}/ at git ref ${ref}: ${(err as Error).message.split('\n')[0]}`);
  }
  const shownTmp = displayPath(tmp);
  const side = compileContract(path.join(tmp, rel), {
    label: `${ref}:${rel || '.'}`,
    rename: (file) => (file.startsWith(shownTmp + '/') ? `${ref}:${file.slice(shownTmp.length + 1)}` : file),
  });
  return { ...side, cleanup: () => rmSync(tmp, { recursive: true, force: true }) };
}

/** `svc diff [--base <git-ref> | --against <snapshot.json>] [--contract <dir>]`. Returns the exit code. */
export async function runDiff(argv: string[], io: CliIo = consoleIo): Promise<number> {
  let args;
  try {
    args = parseArgs(argv, ['base', 'against', 'contract', 'releases']);
  } catch (err) {
    io.err(`svc diff: ${(err as Error).message}`);
    return 2;
  }
  const contractDir = args.values.contract ?? 'contract';
  if (args.values.base && args.values.against) {
    io.err('svc diff: give --base <git-ref> or --against <snapshot.json>, not both.');
    return 2;
  }
  let head: Side;
  let base: Side;
  let cleanup = () => {};
  try {
    head = compileContract(contractDir);
    if (args.values.base) {
      const b = compileAtRef(args.values.base, contractDir);
      cleanup = b.cleanup;
      base = b;
    } else {
      let file = args.values.against;
      if (!file) {
        const newest = releaseFiles(args.values.releases ?? path.join(contractDir, 'releases'))[0];
        if (!newest) {
          io.err(`svc diff: no release snapshot in ${displayPath(path.join(contractDir, 'releases'))}. Run svc release to record the current version, or pass --base <git-ref>.`);
          return 1;
        }
        file = newest.file;
      }
      base = snapshotSide(file);
    }
  } catch (err) {
    if (err instanceof ContractError) {
      io.err(err.message);
      io.err(`svc diff: the contract does not compile (${err.diagnostics.length} error(s)); fix them first.`);
      return 1;
    }
    io.err(`svc diff: ${(err as Error).message}`);
    return 1;
  }
  try {
    const findings = diffContracts(base, head);
    const v = verdict(base, head, findings);
    for (const line of v.lines) (v.exitCode ? io.err : io.out)(line);
    return v.exitCode;
  } finally {
    cleanup();
  }
}

export type { OperationDef };
