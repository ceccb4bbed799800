// meta.get: what the service is and what the caller may do. Callers read it first.
import { service } from '../generated/registry.ts';
import type { PrincipalKind } from '../runtime/contract-types.ts';
import type { HandlerContext } from '../runtime/handler-types.ts';
import type { MetaHandlers } from '../generated/handlers/meta.ts';

export interface Meta {
  contractVersion: string;
  apiVersion: string;
  versions: { version: string; status: 'current' | 'deprecated'; sunset: string | null }[];
  deprecations: { target: string; deprecatedAt: string; sunset: string; link: string; successor: string }[];
  mcpProtocolVersions: string[];
  principal: { kind: PrincipalKind; id: string; loginMethod: 'api_key' | 'oauth'; credentialId?: string };
  effectiveScopes: string[];
  clientScope: { all: boolean; clientIds: string[] };
}

async function get(_input: Record<string, never>, ctx: HandlerContext): Promise<Meta> {
  const { principal } = ctx;
  // Effective scopes in the contract's canonical order; any the registry does not know go last, sorted.
  const known = service.scopes.filter((s) => principal.scopes.has(s));
  const unknown = [...principal.scopes].filter((s) => !service.scopes.includes(s)).sort();
  return {
    contractVersion: service.contractVersion,
    apiVersion: service.apiVersion,
    versions: service.versions.map((v) => ({ version: v.version, status: v.status, sunset: v.sunset })),
    // Nothing is deprecated in 1.0.0 (Versioning 7).
    deprecations: [],
    mcpProtocolVersions: [...service.mcpProtocolVersions],
    principal: {
      kind: principal.kind,
      id: principal.id,
      loginMethod: principal.loginMethod,
      credentialId: principal.credentialId,
    },
    effectiveScopes: [...known, ...unknown],
    clientScope: { all: principal.clientScope.all, clientIds: [...principal.clientScope.clientIds].sort() },
  };
}

export const metaHandlers = {
  'meta.get': get,
} satisfies MetaHandlers;
