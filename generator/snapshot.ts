// Release snapshots: the compiled registry of one contract version as deterministic JSON.
// `svc release` writes contract/releases/<version>.json; `svc diff` compares the contract with one.
import { sortedForJson, sortKeys } from './emit/format.ts';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { OperationDef, ServiceDef } from '../runtime/contract-types.ts';
import { loadContract, parseYamlFile, displayPath, type LoadedContract } from './load.ts';
import { buildModel } from './model.ts';
import { asArray, asObj, isObj, type Obj } from './raw.ts';
import { ContractError, positionOf, type Diagnostic, type JsonPath, type SourceFile } from './source.ts';

/**
 * 2: the service records `personalData` (null when the contract declares none) and `features`, so a
 * release says what it gated; a format-1 release predates both members (svc diff then compares only
 * what it holds).
 */
export const SNAPSHOT_FORMAT = 2;

export interface EnumFact {
  openness: 'open' | 'closed' | null;
  values: unknown[];
}

export interface SnapshotOperation {
  /** The compiled registry entry (the MCP tool without its derived output schema). */
  def: OperationDef;
  /** The operation as written in the contract (schemas with bare $ref names), for schema-level diffs. */
  contract: Obj;
}

export interface Snapshot {
  snapshotFormat: number;
  contractVersion: string;
  service: Omit<ServiceDef, 'personalData'> & { personalData?: { scope: string } | null };
  changelog: { version: string; date: string; added: string[]; deprecated: string[]; removed: string[]; corrected: string[] }[];
  operations: Record<string, SnapshotOperation>;
  /** Component schemas as written in contract/schemas/ (bare $ref names). */
  schemas: Record<string, Obj>;
  /** Every enumeration with its openness: `<Schema>/<json pointer>` or `<operation id>/<json pointer>`. */
  enums: Record<string, EnumFact>;
}

/**
 * Where a node of the contract sits: inside an operation (path relative to it), a named schema,
 * svc.yaml, or a meta-tool of the dynamic MCP mode (key: its name; path relative to it, `input` first).
 */
export type Origin =
  | { kind: 'op'; key: string; path: JsonPath }
  | { kind: 'schema'; key: string; path: JsonPath }
  | { kind: 'svc'; key: ''; path: JsonPath }
  | { kind: 'tool'; key: string; path: JsonPath };

/** A contract version to compare: its snapshot and a way to turn an origin into `file:line:col`. */
export interface Side {
  label: string;
  snapshot: Snapshot;
  locate(origin: Origin): string | null;
}

export function stableJson(value: unknown): string {
  return JSON.stringify(sortedForJson(value), null, 2) + '\n';
}

function collectEnums(node: unknown, prefix: string, out: Record<string, EnumFact>): void {
  if (Array.isArray(node)) {
    node.forEach((item, i) => collectEnums(item, `${prefix}/${i}`, out));
    return;
  }
  if (!isObj(node)) return;
  if (Array.isArray(node.enum)) {
    const o = node['x-svc-enum'];
    out[prefix || '/'] = { openness: o === 'open' || o === 'closed' ? o : null, values: node.enum };
  }
  for (const [key, value] of Object.entries(node)) {
    if (key === 'enum' || key === 'const' || key === 'default' || key === 'examples' || key === 'example') continue;
    if (typeof value === 'object' && value !== null) collectEnums(value, `${prefix}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`, out);
  }
}

/** The snapshot of a loaded contract. Throws ContractError when it does not compile. */
export function buildSnapshot(contract: LoadedContract): Snapshot {
  // buildModel runs every contract check, the deprecation rules included.
  const model = buildModel(contract);
  const operations: Record<string, SnapshotOperation> = {};
  const rawOps = new Map<string, Obj>();
  for (const file of contract.familyFiles)
    for (const op of asArray(asObj(file.data).operations)) rawOps.set(String(asObj(op).id), asObj(op));
  const enums: Record<string, EnumFact> = {};
  for (const op of model.operations) {
    const def = { ...op.def } as OperationDef;
    if (def.mcp) {
      const { outputSchema: _o, description: _d, ...tool } = def.mcp;
      def.mcp = tool as OperationDef['mcp'];
    }
    const contractOp = rawOps.get(def.id) ?? {};
    operations[def.id] = { def, contract: contractOp };
    for (const key of ['input', 'output', 'result', 'page']) if (key in contractOp) collectEnums(contractOp[key], `${def.id}/${key}`, enums);
  }
  const schemas: Record<string, Obj> = {};
  for (const file of contract.schemaFiles)
    for (const [name, schema] of Object.entries(asObj(file.data))) {
      schemas[name] = asObj(schema);
      collectEnums(schema, name, enums);
    }
  return sortKeys({
    snapshotFormat: SNAPSHOT_FORMAT,
    contractVersion: model.info.version,
    service: { ...model.service, personalData: model.service.personalData ?? null },
    changelog: model.changelog,
    operations,
    schemas,
    enums,
  }) as Snapshot;
}

/** Where each operation and schema of a loaded contract sits. */
function contractLocator(contract: LoadedContract, rename?: (file: string) => string): (origin: Origin) => string | null {
  const ops = new Map<string, { file: SourceFile; at: JsonPath }>();
  for (const file of contract.familyFiles)
    asArray(asObj(file.data).operations).forEach((op, i) => ops.set(String(asObj(op).id), { file, at: ['operations', i] }));
  const schemas = new Map<string, SourceFile>();
  for (const file of contract.schemaFiles) for (const name of Object.keys(asObj(file.data))) schemas.set(name, file);
  const show = (file: SourceFile, at: JsonPath) => {
    const p = positionOf(file, at, 'key');
    return `${rename ? rename(file.file) : file.file}:${p.line}:${p.col}`;
  };
  const metaTools = asArray(asObj(asObj(contract.svc?.data).mcpDynamic).tools).map((t) => asObj(t).name);
  return (origin) => {
    if (origin.kind === 'op') {
      const home = ops.get(origin.key);
      return home ? show(home.file, [...home.at, ...origin.path]) : null;
    }
    if (origin.kind === 'tool') {
      const i = metaTools.indexOf(origin.key);
      return i >= 0 && contract.svc ? show(contract.svc, ['mcpDynamic', 'tools', i, ...origin.path]) : null;
    }
    if (origin.kind === 'schema') {
      const file = schemas.get(origin.key);
      return file ? show(file, [origin.key, ...origin.path]) : null;
    }
    return contract.svc ? show(contract.svc, origin.path) : null;
  };
}

export interface CompiledContract extends Side {
  contract: LoadedContract;
}

/** Loads, checks and snapshots the contract in `dir`. Throws ContractError when it does not compile. */
export function compileContract(dir: string, opts: { label?: string; rename?: (file: string) => string } = {}): CompiledContract {
  const contract = loadContract(dir);
  if (contract.diagnostics.length) throw new ContractError(contract.diagnostics);
  const snapshot = buildSnapshot(contract);
  return { label: opts.label ?? displayPath(dir), snapshot, contract, locate: contractLocator(contract, opts.rename) };
}

/** A side read from a snapshot file: locations point into the snapshot JSON itself. */
export function snapshotSide(file: string): Side {
  const text = readFileSync(file, 'utf8');
  const diagnostics: Diagnostic[] = [];
  const source = parseYamlFile(file, text, diagnostics);
  if (diagnostics.length || !isObj(source.data)) throw new ContractError(diagnostics);
  const snapshot = JSON.parse(text) as Snapshot;
  const show = (at: JsonPath) => {
    const p = positionOf(source, at, 'key');
    return `${source.file}:${p.line}:${p.col}`;
  };
  return {
    label: source.file,
    snapshot,
    locate(origin) {
      if (origin.kind === 'op') return snapshot.operations[origin.key] ? show(['operations', origin.key, 'contract', ...origin.path]) : null;
      if (origin.kind === 'schema') return snapshot.schemas[origin.key] ? show(['schemas', origin.key, ...origin.path]) : null;
      if (origin.kind === 'tool') {
        const i = (snapshot.service.mcpDynamicTools ?? []).findIndex((t) => t.name === origin.key);
        const [first, ...rest] = origin.path;
        return i >= 0 ? show(['service', 'mcpDynamicTools', i, ...(first === undefined ? [] : [first === 'input' ? 'inputSchema' : first, ...rest])]) : null;
      }
      return show(['service']);
    },
  };
}

/** Release snapshot files in a directory, newest version first. */
export function releaseFiles(dir: string): { version: string; file: string }[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .map((name) => /^(\d+)\.(\d+)\.(\d+)\.json$/.exec(name))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ version: `${m[1]}.${m[2]}.${m[3]}`, file: path.join(dir, m[0]), key: [+m[1], +m[2], +m[3]] }))
    .sort((a, b) => b.key[0] - a.key[0] || b.key[1] - a.key[1] || b.key[2] - a.key[2])
    .map(({ version, file }) => ({ version, file }));
}

export function parseArgs(argv: string[], flags: string[]): { values: Record<string, string>; bools: Set<string>; rest: string[] } {
  const values: Record<string, string> = {};
  const bools = new Set<string>();
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const eq = arg.indexOf('=');
    const name = arg.startsWith('--') ? (eq > 0 ? arg.slice(2, eq) : arg.slice(2)) : null;
    if (name && flags.includes(name)) {
      if (eq > 0) values[name] = arg.slice(eq + 1);
      else if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) values[name] = argv[++i];
      else throw new Error(`--${name} needs a value.`);
    } else if (name) bools.add(name);
    else rest.push(arg);
  }
  return { values, bools, rest };
}

export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
}
export const consoleIo: CliIo = { out: (l) => console.log(l), err: (l) => console.error(l) };

/**
 * `svc release [--contract <dir>] [--releases <dir>]`: writes <releases>/<version>.json. Refuses to
 * replace an existing snapshot of the same version that differs, except with --correct: a version
 * that has not gone live may be corrected in place when its changelog entry lists the corrections
 * under `corrected`. Returns the exit code.
 */
export async function runRelease(argv: string[], io: CliIo = consoleIo): Promise<number> {
  const { values, bools } = parseArgs(argv, ['contract', 'releases']);
  const contractDir = values.contract ?? 'contract';
  const releasesDir = values.releases ?? path.join(contractDir, 'releases');
  let snapshot: Snapshot;
  try {
    snapshot = compileContract(contractDir).snapshot;
  } catch (err) {
    if (err instanceof ContractError) {
      io.err(err.message);
      io.err(`svc release: the contract does not compile (${err.diagnostics.length} error(s)). Fix them, then run svc release again.`);
      return 1;
    }
    throw err;
  }
  const version = snapshot.contractVersion;
  const file = path.join(releasesDir, `${version}.json`);
  const text = stableJson(snapshot);
  if (existsSync(file)) {
    if (readFileSync(file, 'utf8') === text) {
      io.out(`svc release: ${displayPath(file)} already records contract ${version}; nothing to do.`);
      return 0;
    }
    const entry = snapshot.changelog.find((c) => c.version === version);
    if (bools.has('correct')) {
      if (!entry?.corrected.length) {
        io.err(`svc release: --correct replaces ${displayPath(file)} only when the changelog entry of ${version} lists the corrections under corrected: (what changed before the version went live, and why).`);
        return 1;
      }
      writeFileSync(file, text);
      io.out(`svc release: corrected ${displayPath(file)} in place (${entry.corrected.length} correction(s) listed in the changelog of ${version}).`);
      return 0;
    }
    io.err(
      `svc release: ${displayPath(file)} already records a different contract ${version}. A released version never changes. ` +
        `Raise info.version in ${displayPath(path.join(contractDir, 'svc.yaml'))} (minor for additive changes, patch for wording), add its changelog entry, and release that version.`,
    );
    return 1;
  }
  const newest = releaseFiles(releasesDir)[0];
  if (newest && compareVersions(version, newest.version) < 0) {
    io.err(`svc release: contract ${version} is older than the newest release ${newest.version}. Raise info.version above ${newest.version}.`);
    return 1;
  }
  if (!snapshot.changelog.some((c) => c.version === version)) {
    io.err(`svc release: contract/svc.yaml has no changelog entry for ${version}. Add one under changelog: (version, date, added, deprecated, removed).`);
    return 1;
  }
  mkdirSync(releasesDir, { recursive: true });
  writeFileSync(file, text);
  io.out(`svc release: wrote ${displayPath(file)} (${Object.keys(snapshot.operations).length} operations, ${Object.keys(snapshot.schemas).length} schemas).`);
  return 0;
}

export function parseVersion(v: string): [number, number, number] | null {
  const m = /^(\d+)\.(\d+)\.(\d+)$/.exec(v);
  return m ? [+m[1], +m[2], +m[3]] : null;
}

export function compareVersions(a: string, b: string): number {
  const x = parseVersion(a) ?? [0, 0, 0];
  const y = parseVersion(b) ?? [0, 0, 0];
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
}
