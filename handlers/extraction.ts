// extraction.get: values the file worker read out of an intake document (runtime/files/worker.ts),
// proposed for the record's fields. They reach the record only through intake.draft.set_field
// with source: extraction. Visible within the client scope.
import { eq } from 'drizzle-orm';
import type { ExtractionHandlers } from '../generated/handlers/extraction.ts';
import type { components } from '../generated/types.ts';
import { extractions } from './data/schema.ts';
import type { HandlerContext } from '../runtime/handler-types.ts';
import { notFound } from '../runtime/problem-error.ts';
import { iso } from './mappers/time.ts';

type Extraction = components['schemas']['Extraction'];

async function get(input: components['schemas']['ExtractionGetInput'], ctx: HandlerContext): Promise<Extraction> {
  const [row] = await ctx.db.select().from(extractions).where(eq(extractions.id, input.extraction_id));
  if (!row || !ctx.policy.canReadClient(row.clientId)) throw notFound('Extraction');
  return {
    id: row.id,
    clientId: row.clientId,
    fileId: row.fileId,
    intakeId: row.intakeId,
    status: row.status as Extraction['status'],
    fields: row.fields as Extraction['fields'],
    error: (row.error as Extraction['error']) ?? null,
    createdAt: iso(row.createdAt),
    completedAt: iso(row.completedAt),
  };
}

export const extractionHandlers = {
  'extraction.get': get,
} satisfies ExtractionHandlers;
