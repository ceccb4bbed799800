// Deprecation of operations and versions as clients see it: the response headers (RFC 9745
// Deprecation, RFC 8594 Sunset, RFC 8288 Link) and the GET /v1/meta view. The contract rules that
// make these dates valid live in generator/governance/deprecation.ts, which re-exports these.
import type { Deprecation, OperationDef, ServiceDef } from '../contract-types.ts';

/** Milliseconds since the epoch of an RFC 3339 instant, a date or an HTTP-date; NaN when unreadable. */
export function instant(value: unknown): number {
  if (typeof value !== 'string' || !value.trim()) return NaN;
  return Date.parse(value);
}

/** IMF-fixdate (RFC 9110 HTTP-date), e.g. `Wed, 01 Sep 2027 00:00:00 GMT`. */
export function httpDate(value: string | number): string {
  const t = typeof value === 'number' ? value : instant(value);
  if (Number.isNaN(t)) throw new Error(`Not a date: ${JSON.stringify(value)}`);
  return new Date(t).toUTCString();
}

export function iso(value: string): string {
  const t = instant(value);
  return Number.isNaN(t) ? value : new Date(t).toISOString().replace('.000Z', 'Z');
}

/** The headers a deprecated operation (or version) answers with. */
export function deprecationHeaders(dep: Deprecation): Record<string, string | string[]> {
  const since = instant(dep.since);
  if (Number.isNaN(since)) throw new Error(`Deprecation since is not a date: ${JSON.stringify(dep.since)}`);
  return {
    Deprecation: `@${Math.floor(since / 1000)}`,
    Sunset: httpDate(dep.sunset),
    Link: [`<${dep.link}>; rel="deprecation"`, `<${dep.successorLink}>; rel="successor-version"`],
  };
}

export interface MetaDeprecation {
  target: string;
  deprecatedAt: string;
  sunset: string;
  link: string;
  successor: string;
}

export interface MetaVersion {
  version: string;
  status: 'current' | 'deprecated';
  sunset: string | null;
}

/** A version entry as the model may carry it: ServiceDef's three fields plus the deprecation ones. */
export type VersionEntry = ServiceDef['versions'][number] & { since?: string; link?: string; successor?: string; successorLink?: string };

/**
 * What GET /v1/meta publishes: `deprecations` (deprecated operations, and deprecated versions whose
 * entry carries since/link/successor) sorted by target, and `versions` with sunsets as HTTP-dates.
 */
export function metaDeprecations(
  operations: readonly Pick<OperationDef, 'id' | 'deprecated'>[],
  service: { versions: readonly VersionEntry[] },
): { deprecations: MetaDeprecation[]; versions: MetaVersion[] } {
  const deprecations: MetaDeprecation[] = [];
  for (const op of operations)
    if (op.deprecated)
      deprecations.push({
        target: op.id,
        deprecatedAt: iso(op.deprecated.since),
        sunset: httpDate(op.deprecated.sunset),
        link: op.deprecated.link,
        successor: op.deprecated.successor,
      });
  for (const v of service.versions)
    if (v.status === 'deprecated' && v.since && v.sunset && v.link && v.successor)
      deprecations.push({ target: v.version, deprecatedAt: iso(v.since), sunset: httpDate(v.sunset), link: v.link, successor: v.successor });
  deprecations.sort((a, b) => (a.target < b.target ? -1 : a.target > b.target ? 1 : 0));
  return {
    deprecations,
    versions: service.versions.map((v) => ({ version: v.version, status: v.status, sunset: v.sunset ? httpDate(v.sunset) : null })),
  };
}
