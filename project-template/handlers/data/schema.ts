// This API's own tables (drizzle). The runtime's machinery tables (keys, idempotency, audit, events…)
// come from svc; drizzle-kit reads both (drizzle.config.ts) into one migration history,
// handlers/data/migrations. After a change here: `npx drizzle-kit generate`.
import { index, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

export const notes = pgTable(
  'notes',
  {
    id: text('id').primaryKey(),
    body: text('body').notNull(),
    createdBy: text('created_by').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 6 }).notNull().defaultNow(),
  },
  (t) => [index('notes_created_at').on(t.createdAt, t.id)],
);
