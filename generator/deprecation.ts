// Deprecation machinery: contract rules (checked at generate time), response headers (RFC 9745,
// RFC 8594, RFC 8288 links) and the GET /v1/meta view.
//
// In the contract an operation carries
//   deprecated: { since: <RFC 3339>, sunset: <RFC 3339 or HTTP-date>, link: <notice URL>,
//                 successor: <operation id or path version such as v2>, successorLink: <URL> }
// and an entry of svc.yaml versions[] may carry
//   { version: v1, status: deprecated, since, sunset, link, successor: v2, successorLink }
//   { version: v2, status: current, released: <date it shipped>, sunset: null }
import { instant } from '../runtime/pipeline/deprecation.ts';
export { deprecationHeaders, httpDate, instant, metaDeprecations, type MetaDeprecation, type MetaVersion, type VersionEntry } from '../runtime/pipeline/deprecation.ts';
import type { LoadedContract } from './load.ts';
import { asArray, asObj, isObj, type Obj } from './raw.ts';
import { touchesBroken } from './shapes.ts';
import { diagnostic, type Diagnostic, type JsonPath, type SourceFile } from './source.ts';
import { STANDARD_LIMITS } from './standard-library.ts';

const FIELDS = ['since', 'sunset', 'link', 'successor', 'successorLink'] as const;

/** `t` plus `months` calendar months (UTC), clamped to the last day of the target month. */
export function addMonths(t: number, months: number): number {
  const d = new Date(t);
  const target = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + months, 1, d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds()));
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(d.getUTCDate(), lastDay));
  return target.getTime();
}

/** The major of a path (`/v2/tasks` -> 2), or null. */
function majorOfPath(p: unknown): number | null {
  const m = typeof p === 'string' ? /^\/v(\d+)(\/|$)/.exec(p) : null;
  return m ? Number(m[1]) : null;
}

interface Ctx {
  svc: SourceFile | null;
  versions: Map<string, { entry: Obj; at: JsonPath }>;
  ops: Map<string, Obj>;
  minimumMonths: number;
  out: Diagnostic[];
}

function checkOne(ctx: Ctx, source: SourceFile, at: JsonPath, dep: Obj, label: string, ownMajor: number | null): void {
  const missing = FIELDS.filter((f) => typeof dep[f] !== 'string' || !(dep[f] as string).trim());
  if (missing.length) {
    ctx.out.push(
      diagnostic(
        source,
        at,
        'deprecation-incomplete',
        `The deprecation of ${label} lacks ${missing.join(', ')}. Give since (RFC 3339), sunset (RFC 3339), link (notice URL), successor (operation id or version) and successorLink (its URL).`,
        'key',
      ),
    );
  }
  const since = instant(dep.since);
  const sunset = instant(dep.sunset);
  for (const [field, t] of [['since', since], ['sunset', sunset]] as const)
    if (typeof dep[field] === 'string' && Number.isNaN(t))
      ctx.out.push(diagnostic(source, [...at, field], 'deprecation-invalid-date', `${field} of ${label} is ${JSON.stringify(dep[field])}, not a date. Write an RFC 3339 instant such as 2027-03-01T00:00:00Z.`));
  if (!Number.isNaN(since) && !Number.isNaN(sunset) && sunset < since)
    ctx.out.push(
      diagnostic(
        source,
        [...at, 'sunset'],
        'sunset-before-deprecation',
        `${label} sets sunset ${dep.sunset} before its deprecation ${dep.since}. The sunset is never earlier than the deprecation (RFC 8594): move sunset after ${dep.since}.`,
      ),
    );
  if (Number.isNaN(sunset) || typeof dep.successor !== 'string') return;

  // The successor's major: a path version (v2) or an operation's path.
  let successorMajor: number | null = null;
  const versionName = /^v(\d+)$/.exec(dep.successor);
  if (versionName) successorMajor = Number(versionName[1]);
  else if (ctx.ops.has(dep.successor)) successorMajor = majorOfPath(asObj(ctx.ops.get(dep.successor)!.http).path);
  else {
    ctx.out.push(
      diagnostic(source, [...at, 'successor'], 'unknown-successor', `successor ${JSON.stringify(dep.successor)} of ${label} is neither an operation id of the contract nor a path version (v2). Name the replacement.`),
    );
    return;
  }
  if (successorMajor === null || ownMajor === null || successorMajor <= ownMajor) return;
  const shipped = ctx.versions.get(`v${successorMajor}`);
  const releasedRaw = shipped ? asObj(shipped.entry).released : undefined;
  const released = instant(releasedRaw);
  const from = Number.isNaN(released) ? since : released;
  if (Number.isNaN(from)) return;
  const earliest = addMonths(from, ctx.minimumMonths);
  if (sunset < earliest) {
    const fromText = Number.isNaN(released) ? `its deprecation (${dep.since}; v${successorMajor} has no released date)` : `v${successorMajor} ships (${releasedRaw})`;
    ctx.out.push(
      diagnostic(
        source,
        [...at, 'sunset'],
        'sunset-too-soon',
        `${label} sets sunset ${dep.sunset}, less than ${ctx.minimumMonths} months (limits.priorMajorMinimumMonths) after ${fromText}. ` +
          `v${ownMajor} stays in service at least ${ctx.minimumMonths} months after its successor major ships: set sunset to ${new Date(earliest).toISOString().replace('.000Z', 'Z')} or later.`,
      ),
    );
  }
}

/**
 * Deprecation rules over the loaded contract, as positioned diagnostics in the generator's format.
 * A deprecation whose shape is already reported (`broken`, from shapes.ts) is not checked again.
 */
export function checkDeprecations(contract: LoadedContract, broken?: Map<string, JsonPath[]>): Diagnostic[] {
  const svc = asObj(contract.svc?.data);
  const ctx: Ctx = {
    svc: contract.svc,
    versions: new Map(),
    ops: new Map(),
    minimumMonths: typeof asObj(svc.limits).priorMajorMinimumMonths === 'number' ? (asObj(svc.limits).priorMajorMinimumMonths as number) : STANDARD_LIMITS.priorMajorMinimumMonths.value,
    out: [],
  };
  asArray(svc.versions).forEach((v, i) => ctx.versions.set(String(asObj(v).version), { entry: asObj(v), at: ['versions', i] }));
  for (const file of contract.familyFiles) for (const op of asArray(asObj(file.data).operations)) ctx.ops.set(String(asObj(op).id), asObj(op));

  for (const file of contract.familyFiles)
    asArray(asObj(file.data).operations).forEach((raw, i) => {
      const op = asObj(raw);
      if (!('deprecated' in op) || op.deprecated === null || op.deprecated === false) return;
      const at: JsonPath = ['operations', i, 'deprecated'];
      if (touchesBroken(broken, file.file, at)) return;
      if (!isObj(op.deprecated)) {
        ctx.out.push(diagnostic(file, at, 'deprecation-incomplete', `deprecated of ${String(op.id)} is not a map. Write deprecated: {since, sunset, link, successor, successorLink}.`));
        return;
      }
      checkOne(ctx, file, at, op.deprecated, `operation ${String(op.id)}`, majorOfPath(asObj(op.http).path));
    });

  if (contract.svc)
    for (const [name, { entry, at }] of ctx.versions) {
      if (entry.status !== 'deprecated' || touchesBroken(broken, contract.svc.file, at)) continue;
      const major = /^v(\d+)$/.exec(name);
      const dep: Obj = { ...entry };
      if (!('successor' in dep) && major && ctx.versions.has(`v${Number(major[1]) + 1}`)) dep.successor = `v${Number(major[1]) + 1}`;
      checkOne(ctx, contract.svc, at, dep, `version ${name}`, major ? Number(major[1]) : null);
    }
  return ctx.out;
}
