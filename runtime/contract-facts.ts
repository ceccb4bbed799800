// The contract facts of the running service, for the runtime's leaf functions: the registry's
// `service` (limits, problem catalogue, scopes, role labels, event types, versions). runtime/ imports
// nothing from generated/; the facts arrive in the registry bin/wiring.ts builds, and startServer and
// createApp (and `svc seed`) install its service here before anything reads it.
//
// A module-level holder, not a parameter, only because its readers are leaf functions reached from
// every handler, transport and worker (problemBody, pageSize, keyExpiresAt, the webhook sender):
// threading the facts through each caller would reach every handler. What createApp builds takes
// `service` as an argument instead. One contract per process: the last installed one is read.
import type { RuntimeService, ServiceFeatures, StandardLimits } from './contract-types.ts';

let installed: RuntimeService | null = null;

/** Makes `service` the contract every later read answers from (startServer, createApp, `svc seed`, a test's setup). */
export function installContractFacts(service: RuntimeService): void {
  installed = service;
}

/** The installed contract's service facts; throws when none was installed (a start path that forgot it). */
export function contractFacts(): RuntimeService {
  if (!installed) {
    throw new Error('No contract installed: startServer and createApp install the registry’s service (runtime/contract-facts.ts installContractFacts).');
  }
  return installed;
}

let migrations: string | null = null;

/**
 * Makes `folder` (an absolute path) the project's migration history every later open and check reads
 * (Registry.migrationsFolder: startServer, createApp, `svc seed`, a test's setup). The runtime owns no
 * migrations folder: the project's one history covers its machinery tables and the API's own.
 */
export function installMigrationsFolder(folder: string): void {
  migrations = folder;
}

/** The installed migrations folder; throws when none was installed. */
export function migrationsFolder(): string {
  if (!migrations) {
    throw new Error('No migrations folder installed: startServer and createApp install the registry’s migrationsFolder (runtime/contract-facts.ts installMigrationsFolder).');
  }
  return migrations;
}

/** The installed contract's limits. */
export function contractLimits(): StandardLimits {
  return contractFacts().limits;
}

/** The installed contract's features (svc.yaml features: client tenancy, approvals). */
export function contractFeatures(): ServiceFeatures {
  return contractFacts().features;
}
