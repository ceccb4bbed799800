// The notes family's operation bodies: the only hand-written business logic. Typed by the generated
// NotesHandlers, so a missing or mistyped handler is a type error (`npm test` runs tsc first).
import { and, getTableColumns } from 'drizzle-orm';
import type { NotesHandlers } from '../generated/handlers/notes.ts';
import type { components } from '../generated/types.ts';
import { newId } from 'svc/runtime/data/ids.ts';
import { pageKeyColumn, startPage } from 'svc/runtime/data/paging.ts';
import { notes } from './data/schema.ts';

type Note = components['schemas']['Note'];

function toNote(row: typeof notes.$inferSelect): Note {
  return { id: row.id, body: row.body, createdAt: row.createdAt.toISOString() };
}

export const notesHandlers = {
  'notes.list': async (input, ctx) => {
    const page = await startPage(ctx.db, input, 'notes.list');
    const rows = await ctx.db
      .select({ ...getTableColumns(notes), pageKey: pageKeyColumn(notes.createdAt) })
      .from(notes)
      .where(and(page.after(notes.createdAt, notes.id)))
      .orderBy(...page.orderBy(notes.createdAt, notes.id))
      .limit(page.fetch);
    return page.finish(rows, toNote);
  },
  'notes.create': async (input, ctx) => {
    const [row] = await ctx.db
      .insert(notes)
      .values({ id: newId('note'), body: input.body, createdBy: ctx.principal.id, createdAt: ctx.now })
      .returning();
    return toNote(row!);
  },
} satisfies NotesHandlers;
