// meta.get: what the service is and what the caller may do. Callers read it first.
import { operations, service } from '../generated/registry.ts';
import type { MetaHandlers } from '../generated/handlers/meta.ts';
import type { components } from '../generated/types.ts';
import type { HandlerContext } from '../runtime/handler-types.ts';
import { metaDeprecations } from '../runtime/pipeline/deprecation.ts';

type Meta = components['schemas']['Meta'];

// Deprecations and sunsets come from the registry (the contract's `deprecated` marks and
// svc.yaml versions); in 1.0.0 nothing is deprecated, so the list is empty (Versioning 7).
const { deprecations, versions } = metaDeprecations(operations, service);

async function get(_input: Record<string, unknown>, ctx: HandlerContext): Promise<Meta> {
  const { principal } = ctx;
  // Effective scopes in the contract's canonical order; any the registry does not know go last, sorted.
  const known = service.scopes.filter((s) => principal.scopes.has(s));
  const unknown = [...principal.scopes].filter((s) => !service.scopes.includes(s)).sort();
  return {
    contractVersion: service.contractVersion,
    apiVersion: service.apiVersion,
    versions,
    deprecations,
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
