// The client a proposal concerns, resolved FROM THE DATABASE (never from input alone): table-driven
// by the resource type the contract's per-operation `subject:` names. The runtime loads the one
// resource it owns (a client, the tenancy's table); an API hands the loaders of its own resource
// types in its registry (`Registry.approvalSubjects`, the Platform API's from handlers/index.ts
// registryExtras). A named subject that does not exist is 404 at proposal time.
import { eq } from 'drizzle-orm';
import type { OperationDef } from '../contract-types.ts';
import type { Db } from '../data/client.ts';
import { clients } from '../data/schema.ts';
import { notFound } from '../problem-error.ts';

export interface ApprovalSubject {
  type: string;
  id: string;
  clientId: string | null;
}

/** Loads the subject's client; undefined when the row does not exist. */
export type SubjectLoader = (db: Db, id: string) => Promise<{ clientId: string | null } | undefined>;

/** An API's subject loaders by resource type (the contract's `subject: { resource }`). */
export type SubjectLoaders = Readonly<Record<string, SubjectLoader>>;

/** The runtime's own subject type: a client (the tenancy's table). */
const loadClient: SubjectLoader = async (db, id) => {
  const [row] = await db.select({ clientId: clients.id }).from(clients).where(eq(clients.id, id)).limit(1);
  return row;
};

/**
 * The subject the operation's contract names (`subject: { resource, from }`), with its client loaded
 * from the database. Null for `subject: { none }` (private to the proposer). A resource the API
 * hands no loader for has no client (internal: operators only) until it does.
 */
export async function resolveSubject(db: Db, op: OperationDef, input: Record<string, unknown>, loaders: SubjectLoaders = {}): Promise<ApprovalSubject | null> {
  if (!op.subject) return null;
  const { resource, from } = op.subject;
  const id = input[from];
  if (typeof id !== 'string') return null;
  const load = resource === 'client' ? loadClient : Object.hasOwn(loaders, resource) ? loaders[resource] : undefined;
  if (!load) return { type: resource, id, clientId: null };
  const row = await load(db, id);
  if (!row) throw notFound(resource[0]!.toUpperCase() + resource.slice(1));
  return { type: resource, id, clientId: row.clientId };
}
