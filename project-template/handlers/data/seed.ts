// The demo data `npm start` (`svc serve --demo`) and `npx svc seed` add after svc's own starter seed
// (an owner operator and an API key with every scope, printed at start). Runs on every start with
// --demo: insert only what is missing.
import { notes } from './schema.ts';
import type { Database } from 'svc/runtime/data/client.ts';

/** What svc passes (bin/project-seed.ts in svc). The values returned are printed with the demo key. */
export interface SeedContext {
  database: Database;
  baseUrl: string;
  /** The owner operator the demo key belongs to. */
  operatorUserId: string;
  now: Date;
}

export async function seed({ database, operatorUserId, now }: SeedContext): Promise<Record<string, unknown>> {
  await database.db
    .insert(notes)
    .values({ id: 'note_welcome', body: 'Welcome to your new API. Edit contract/, run `npx svc generate`, write the body in handlers/.', createdBy: operatorUserId, createdAt: now })
    .onConflictDoNothing({ target: notes.id });
  return { welcomeNoteId: 'note_welcome' };
}
