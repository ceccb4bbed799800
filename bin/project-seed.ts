// The demo seed of a project other than this repository (`svc serve --demo`, `svc seed` in a project
// made by `svc init`, docs/projects.md): what a first-time user needs to call the API. An owner
// operator and an API key with every scope of the contract (printed once), then the project's own
// seed module when svc.config.json names one ("seed"): its `seed(context)` adds demo rows and may
// return more values to print. Idempotent like the Platform's demo seed: fixed ids, a fresh key each run.
import { pathToFileURL } from 'node:url';
import type { Registry } from '../runtime/app.ts';
import type { Config } from '../runtime/config.ts';
import type { Database } from '../runtime/data/client.ts';
import { apiKeys, users } from '../runtime/data/schema.ts';
import { newId } from '../runtime/data/ids.ts';
import { displayPrefix, generateApiKeySecret, hashSecret } from '../runtime/auth/secrets.ts';
import type { DemoSeeder, SeedCredentials } from '../runtime/server.ts';

export const OWNER_USER_ID = 'usr_owner';
const DAY_MS = 86_400_000;

/** What a project's seed module's `seed` receives. */
export interface ProjectSeedContext {
  database: Database;
  baseUrl: string;
  /** The owner operator the demo key belongs to. */
  operatorUserId: string;
  now: Date;
}

export type ProjectSeed = (context: ProjectSeedContext) => Promise<Record<string, unknown> | void>;

/** The role label the owner gets: `owner` when the contract's roles name it, else the label with the most scopes. */
function ownerRole(registry: Registry): string | null {
  const roles = Object.entries(registry.service.roleScopes);
  if (roles.some(([label]) => label === 'owner')) return 'owner';
  return roles.sort((a, b) => b[1].length - a[1].length)[0]?.[0] ?? null;
}

/** The seeder startServer runs (`svc serve --demo`); `svc seed` calls it too. */
export function projectSeeder(seedModule: string | null): DemoSeeder {
  return async (database: Database, _config: Config, registry: Registry, baseUrl: string): Promise<SeedCredentials> => {
    const now = new Date();
    const out: Record<string, unknown> = { baseUrl };
    const role = ownerRole(registry);
    if (registry.service.principals.includes('operator') && role) {
      const secret = generateApiKeySecret('test');
      const id = newId('apiKey');
      await database.transaction(async (tx) => {
        await tx
          .insert(users)
          .values({ id: OWNER_USER_ID, kind: 'operator', name: 'Owner', email: 'owner@example.invalid', role, allClients: true, oauthSubject: 'svc|owner', createdAt: now })
          .onConflictDoNothing({ target: users.id });
        await tx.insert(apiKeys).values({
          id,
          ownerUserId: OWNER_USER_ID,
          name: 'Demo operator key (every scope)',
          mode: 'test',
          prefix: displayPrefix(secret),
          secretHash: hashSecret(secret),
          scopes: [...registry.service.scopes],
          clientIds: [],
          ipAllowlist: [],
          createdAt: now,
          expiresAt: new Date(now.getTime() + registry.service.limits.apiKeyLifetimeDays * DAY_MS),
        });
      });
      Object.assign(out, { operatorKey: secret, operatorKeyId: id, operatorUserId: OWNER_USER_ID });
    }
    if (seedModule) {
      const mod = (await import(pathToFileURL(seedModule).href)) as { seed?: ProjectSeed };
      if (typeof mod.seed !== 'function') throw new Error(`${seedModule} (svc.config.json "seed") exports no seed function: export async function seed(context) { … }`);
      Object.assign(out, (await mod.seed({ database, baseUrl, operatorUserId: OWNER_USER_ID, now })) ?? {});
    }
    return out as SeedCredentials;
  };
}
