// The client a proposal concerns, resolved FROM THE DATABASE (never from input alone): table-driven
// by the input member that names the subject. A family whose table arrives later (reviews, intake,
// opportunities, campaigns) registers its loader here. A named subject that does not exist is 404
// at proposal time.
import { eq } from 'drizzle-orm';
import type { Db } from './db/client.ts';
import { clients, projects } from './db/schema.ts';
import { notFound } from './problem-error.ts';

export interface ApprovalSubject {
  type: string;
  id: string;
  clientId: string | null;
}

/** Loads the subject's client; undefined when the row does not exist. */
export type SubjectLoader = (db: Db, id: string) => Promise<{ clientId: string | null } | undefined>;

const loaders = new Map<string, { type: string; load: SubjectLoader }>();

export function registerSubjectLoader(inputMember: string, type: string, load: SubjectLoader): void {
  loaders.set(inputMember, { type, load });
}

registerSubjectLoader('project_id', 'project', async (db, id) => {
  const [row] = await db.select({ clientId: projects.clientId }).from(projects).where(eq(projects.id, id)).limit(1);
  return row;
});
registerSubjectLoader('clientId', 'client', async (db, id) => {
  const [row] = await db.select({ clientId: clients.id }).from(clients).where(eq(clients.id, id)).limit(1);
  return row;
});

/** The first registered subject named by the input (path ids before clientId); null when none is. */
export async function resolveSubject(db: Db, input: Record<string, unknown>): Promise<ApprovalSubject | null> {
  for (const [member, { type, load }] of loaders) {
    if (member === 'clientId') continue;
    const id = input[member];
    if (typeof id === 'string') return found(type, id, await load(db, id));
  }
  const clientId = input.clientId;
  if (typeof clientId === 'string') return found('client', clientId, await loaders.get('clientId')!.load(db, clientId));
  return null;
}

function found(type: string, id: string, row: { clientId: string | null } | undefined): ApprovalSubject {
  if (!row) throw notFound(type[0]!.toUpperCase() + type.slice(1));
  return { type, id, clientId: row.clientId };
}
