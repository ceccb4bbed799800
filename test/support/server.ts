// A real svc server for end-to-end tests: a fresh database (PGlite in memory, or a new PostgreSQL
// database when DATABASE_URL is set), the demo seed, and the node server on a free loopback port.
// Everything the server logs is captured (logs) so a test can prove no secret reaches it.
import { loadConfig, type Config } from '../../runtime/config.ts';
import type { Database } from '../../runtime/db/client.ts';
import type { CreateAppOptions, SvcApp } from '../../runtime/app.ts';
import { loadSeed, startServer, type SeedCredentials } from '../../runtime/server.ts';
import { freshDatabase } from './db.ts';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formatsModule from 'ajv-formats';
import { generatedRegistry } from '../../runtime/app.ts';
import { operationsById, schemas } from '../../generated/registry.ts';
import type { ValidateFn } from '../../runtime/pipeline/validate.ts';

/**
 * generated/validators.js reads ajv's CommonJS helpers as `import x from …; x.default`, which Node
 * gives but vitest's CJS interop (deps.interopDefault) unwraps once more, so under vitest a string
 * length check throws "func1 is not a function". Until the generator emits interop-proof imports,
 * tests compile the same input schemas (generated/registry.ts `schemas`) in process instead.
 */
function generatedValidatorsWork(): boolean {
  try {
    generatedRegistry().validators['tasks.get']!({ task_id: 'tsk_1' });
    return true;
  } catch {
    return false;
  }
}

let compiled: Record<string, ValidateFn> | null = null;
export function compiledValidators(): Record<string, ValidateFn> {
  if (compiled) return compiled;
  const addFormats = ((formatsModule as unknown as { default?: unknown }).default ?? formatsModule) as (ajv: Ajv2020) => void;
  const ajv = new Ajv2020({ allErrors: true, strict: false, logger: false });
  addFormats(ajv);
  const DEFS = 'https://svc.invalid/schemas.json';
  const rewrite = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(rewrite);
    if (!node || typeof node !== 'object') return node;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(node)) {
      if (k.startsWith('x-svc-') || k === 'decision') continue;
      out[k] = k === '$ref' && typeof v === 'string' && v.startsWith('#/components/schemas/') ? `${DEFS}#/$defs/${v.slice(21)}` : rewrite(v);
    }
    return out;
  };
  ajv.addSchema({ $id: DEFS, $defs: rewrite(schemas) as Record<string, unknown> });
  const pascal = (id: string) => id.split(/[._]/).map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');
  compiled = {};
  for (const id of Object.keys(operationsById)) {
    compiled[id] = ajv.compile({ $ref: `${DEFS}#/$defs/${pascal(id)}Input` }) as unknown as ValidateFn;
  }
  return compiled;
}

/** Registry overrides tests need (see compiledValidators). */
export function testRegistry(): { validators?: Record<string, ValidateFn> } {
  return generatedValidatorsWork() ? {} : { validators: compiledValidators() };
}

export interface TestServerOptions extends Partial<Config> {
  app?: Omit<CreateAppOptions, 'database' | 'config' | 'log'>;
}

export interface TestServer {
  url: string;
  credentials: SeedCredentials;
  database: Database;
  config: Config;
  svc: SvcApp;
  /** What the server logged. */
  logs: string[];
  flushAudit(): Promise<void>;
  close(): Promise<void>;
}

export async function startTestServer(overrides: TestServerOptions = {}): Promise<TestServer> {
  const { app, ...configOverrides } = overrides;
  const database = await freshDatabase();
  const logs: string[] = [];
  try {
    const base = loadConfig({}, { port: 0, ...configOverrides });
    const server = await startServer({
      config: base,
      database,
      hostname: '127.0.0.1',
      app: { ...app, registry: { ...testRegistry(), ...app?.registry }, log: (m) => logs.push(m) },
    });
    // Seeded after the server knows its base URL (the seed may record it, e.g. OAuth audiences).
    const credentials = await (await loadSeed())(database, { baseUrl: server.config.baseUrl });
    return {
      url: server.url,
      credentials,
      database,
      config: server.config,
      svc: server.svc,
      logs,
      flushAudit: () => server.svc.flushAudit(),
      async close() {
        await server.close();
        await database.close();
      },
    };
  } catch (err) {
    await database.close().catch(() => undefined);
    throw err;
  }
}
