// Demo activity for issue 12's records (demo/seed.ts calls it when `svc serve --demo` or
// `svc seed` seeds): intake records (a draft benefits onboarding for Acme with an uploaded census and
// its extraction, a finalized company profile for Acme, a draft for Globex), the census file in the
// configured store (local or S3) with its real sha256, and pipeline runs executed by the registered
// steps themselves (an Acme digest that succeeded, an internal one that failed on maxOpenTasks).
// Everything has fixed ids and is written once (onConflictDoNothing), so seeding again adds nothing.
// Operations are requested through the owner's demo OAuth grant (grt_demo_owner): the owner signed in
// through the demo agent sees them in operations.list.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { and, eq } from 'drizzle-orm';
import type { Db } from '../runtime/data/client.ts';
import { files, operations, uploads } from '../runtime/data/schema.ts';
import { extractions, fileLinks, intakeRecords, pipelineRuns, pipelineSteps } from '../handlers/data/schema.ts';
import { extractValues } from '../runtime/files/extract.ts';
import type { FileStore } from '../runtime/files/store.ts';
import { writePipelineEvent, type PipelineDefinition } from '../handlers/workers/pipeline-runs.ts';
import { problemRecord } from '../runtime/problem-documents.ts';
import type { IntakeTemplates } from '../handlers/intake-templates.ts';

export type { IntakeTemplates };

export interface SeedActivityOptions {
  /** Registered pipelines: demo runs are executed with their steps (none: no runs). */
  pipelines?: readonly PipelineDefinition[];
  /** Where the demo census file's bytes go (none: no file and no extraction). */
  fileStore?: FileStore;
  /** The intake templates (handlers/intake-templates.ts, through the registry); none: no intake records. */
  intakeTemplates?: IntakeTemplates;
}

const OWNER = { kind: 'operator', id: 'usr_demo_owner', name: 'Olivia Owner', credentialId: 'grt_demo_owner' } as const;
const ACME = 'cli_demo_acme';
const GLOBEX = 'cli_demo_globex';

export const DEMO_CENSUS = {
  uploadId: 'upl_demo_acme_census',
  fileId: 'fil_demo_acme_census',
  extractionId: 'ext_demo_acme_census',
  operationId: 'op_demo_extraction_census',
  name: 'acme-census.csv',
  contentType: 'text/csv',
  bytes: Buffer.from('Company name,Employee count,Plan start date,Plan type,Dental included\r\nAcme Benefits Co,"1,250",01/01/2027,PPO,yes\r\n'),
} as const;

type FieldValues = Record<string, string | number | boolean>;

/** A record's fields from its template: `values` set (draft, or final when the record is finalized). */
function fieldsFor(templates: IntakeTemplates, template: string, values: FieldValues, finalized: boolean, at: Date): unknown[] {
  return templates[template]!.map((def) => {
    const set = Object.hasOwn(values, def.key);
    return {
      key: def.key,
      label: def.label,
      type: def.type,
      required: def.required,
      ...(def.choices ? { choices: [...def.choices] } : {}),
      value: set ? values[def.key] : null,
      status: set ? (finalized ? 'final' : 'draft') : 'empty',
      source: 'manual',
      updatedAt: set ? at.toISOString() : null,
      updatedBy: set ? { kind: OWNER.kind, id: OWNER.id, name: OWNER.name } : null,
    };
  });
}

export async function seedActivity(tx: Db, at: (daysAgo: number, minutes?: number) => Date, baseUrl: string, options: SeedActivityOptions): Promise<void> {
  const record = (templates: IntakeTemplates, id: string, clientId: string, template: string, title: string, values: FieldValues, finalized: boolean, daysAgo: number, projectId: string | null = null) => ({
    id,
    clientId,
    projectId,
    title,
    template,
    status: finalized ? ('finalized' as const) : ('draft' as const),
    fields: fieldsFor(templates, template, values, finalized, at(daysAgo - 1)),
    version: 1,
    createdByKind: OWNER.kind,
    createdById: OWNER.id,
    createdAt: at(daysAgo),
    updatedAt: at(daysAgo - 1),
    finalizedAt: finalized ? at(daysAgo - 1) : null,
  });
  const templates = options.intakeTemplates;
  // Intake records (and the census file registered on one of them) need the templates.
  if (templates) {
  await tx
    .insert(intakeRecords)
    .values([
      record(templates, 'int_demo_acme_benefits', ACME, 'benefits_onboarding', 'Acme benefits onboarding 2027', { company_name: 'Acme Benefits Co', plan_type: 'ppo' }, false, 12, 'prj_demo_acme_enrollment'),
      record(templates, 'int_demo_acme_profile', ACME, 'company_profile', 'Acme company profile', { legal_name: 'Acme Benefits Company LLC', industry: 'Manufacturing', founded_on: '1998-04-01' }, true, 40),
      record(templates, 'int_demo_globex_benefits', GLOBEX, 'benefits_onboarding', 'Globex benefits onboarding', { company_name: 'Globex Health' }, false, 6),
    ])
    .onConflictDoNothing({ target: intakeRecords.id });
  if (options.fileStore) await seedCensus(tx, at, options.fileStore);
  }
  if (options.pipelines) {
    const digest = options.pipelines.find((p) => p.name === 'task_digest');
    if (digest) {
      await seedRun(tx, digest, baseUrl, { id: 'run_demo_acme_digest', clientId: ACME, parameters: {}, operationId: 'op_demo_run_acme_digest', at: at(1) });
      await seedRun(tx, digest, baseUrl, { id: 'run_demo_internal_digest', clientId: null, parameters: { maxOpenTasks: 0 }, operationId: 'op_demo_run_internal_digest', at: at(0, 95) }); // not a contract limit
    }
  }
}

/** The census CSV: stored (bytes and sha256 real), registered against the Acme onboarding record, extracted. */
async function seedCensus(tx: Db, at: (daysAgo: number, minutes?: number) => Date, store: FileStore): Promise<void> {
  const c = DEMO_CENSUS;
  const [existing] = await tx.select({ id: files.id }).from(files).where(eq(files.id, c.fileId));
  if (existing) return;
  const key = `uploads/${c.uploadId}`;
  const stored = await store.put(key, Readable.from([c.bytes]), c.bytes.length);
  const sha256 = createHash('sha256').update(c.bytes).digest('hex');
  if (stored.sha256 !== sha256) throw new Error('the demo census was not stored intact');
  await tx.insert(uploads).values({
    id: c.uploadId,
    clientId: ACME,
    name: c.name,
    contentType: c.contentType,
    maxBytes: c.bytes.length,
    status: 'registered',
    sizeBytes: c.bytes.length,
    sha256,
    storageKey: key,
    requestedByKind: OWNER.kind,
    requestedById: OWNER.id,
    requestedByCredentialId: OWNER.credentialId,
    expiresAt: at(11, 45),
    createdAt: at(11, 60),
    receivedAt: at(11, 59),
  });
  const [intake] = await tx.select({ fields: intakeRecords.fields }).from(intakeRecords).where(eq(intakeRecords.id, 'int_demo_acme_benefits'));
  const defs = (intake!.fields as { key: string; label: string; type: string; choices?: string[] }[]).map(({ key, label, type, choices }) => ({ key, label, type, choices }));
  const values = await extractValues(c.bytes, c.contentType, defs as Parameters<typeof extractValues>[2]);
  await tx.insert(operations).values({
    id: c.operationId,
    kind: 'extraction',
    status: 'succeeded',
    progress: 100,
    requestedByKind: OWNER.kind,
    requestedById: OWNER.id,
    requestedByName: OWNER.name,
    requestedByCredentialId: OWNER.credentialId,
    subjectId: c.extractionId,
    result: { extractionId: c.extractionId },
    createdAt: at(11, 58),
    updatedAt: at(11, 57),
    finishedAt: at(11, 57),
  });
  await tx.insert(files).values({
    id: c.fileId,
    uploadId: c.uploadId,
    clientId: ACME,
    name: c.name,
    contentType: c.contentType,
    sizeBytes: c.bytes.length,
    sha256,
    purpose: 'intake_document',
    status: 'available',
    storageKey: key,
    uploadedByKind: OWNER.kind,
    uploadedById: OWNER.id,
    uploadedByName: OWNER.name,
    createdAt: at(11, 58),
    scannedAt: at(11, 58),
  });
  await tx.insert(fileLinks).values({ fileId: c.fileId, projectId: 'prj_demo_acme_enrollment', intakeId: 'int_demo_acme_benefits' });
  await tx.insert(extractions).values({
    id: c.extractionId,
    clientId: ACME,
    fileId: c.fileId,
    intakeId: 'int_demo_acme_benefits',
    operationId: c.operationId,
    status: 'succeeded',
    fields: values,
    createdAt: at(11, 58),
    startedAt: at(11, 58),
    completedAt: at(11, 57),
  });
}

/** A run of `def` executed now, step by step, with the registered steps (in the seed's transaction). */
async function seedRun(
  tx: Db,
  def: PipelineDefinition,
  baseUrl: string,
  spec: { id: string; clientId: string | null; parameters: Record<string, unknown>; operationId: string; at: Date },
): Promise<void> {
  const [existing] = await tx.select({ id: pipelineRuns.id }).from(pipelineRuns).where(eq(pipelineRuns.id, spec.id));
  if (existing) return;
  const run = { id: spec.id, clientId: spec.clientId };
  await tx.insert(operations).values({
    id: spec.operationId,
    kind: 'pipeline_run',
    status: 'running',
    progress: 0,
    requestedByKind: OWNER.kind,
    requestedById: OWNER.id,
    requestedByName: OWNER.name,
    requestedByCredentialId: OWNER.credentialId,
    subjectId: spec.id,
    createdAt: spec.at,
    updatedAt: spec.at,
  });
  await tx.insert(pipelineRuns).values({
    id: spec.id,
    clientId: spec.clientId,
    pipeline: def.name,
    status: 'running',
    trigger: 'manual',
    parentRunId: null,
    operationId: spec.operationId,
    parameters: spec.parameters,
    requestedByKind: OWNER.kind,
    requestedById: OWNER.id,
    requestedByName: OWNER.name,
    requestedByCredentialId: OWNER.credentialId,
    createdAt: spec.at,
    startedAt: spec.at,
  });
  await tx.insert(pipelineSteps).values(def.steps.map((s, position) => ({ runId: spec.id, position, name: s.name, status: 'pending' as const })));
  await writePipelineEvent(tx, run, { type: 'run_queued', level: 'info', message: `Run of ${def.name} queued`, data: { operationId: spec.operationId }, at: spec.at });
  await writePipelineEvent(tx, run, { type: 'run_started', level: 'info', message: `Run of ${def.name} started`, at: spec.at });
  const outputs: Record<string, unknown> = {};
  let error: Record<string, unknown> | null = null;
  for (const [position, step] of def.steps.entries()) {
    if (error) {
      await tx.update(pipelineSteps).set({ status: 'skipped', finishedAt: spec.at }).where(eqStep(spec.id, position));
      continue;
    }
    await writePipelineEvent(tx, run, { type: 'step_started', level: 'debug', step: step.name, message: `Step ${step.name} started`, at: spec.at });
    try {
      // In a savepoint: a step that fails in SQL must not abort the seed's transaction.
      const output = await tx.transaction((sp) =>
        step.run({
          db: sp,
          run: { id: spec.id, clientId: spec.clientId, pipeline: def.name, parameters: spec.parameters },
          outputs,
          log: (level, message, data) => writePipelineEvent(sp, run, { type: 'log', level, step: step.name, message, data, at: spec.at }),
        }),
      );
      outputs[step.name] = output;
      await tx.update(pipelineSteps).set({ status: 'succeeded', attempts: 1, startedAt: spec.at, finishedAt: spec.at, output }).where(eqStep(spec.id, position));
      await writePipelineEvent(tx, run, { type: 'step_succeeded', level: 'info', step: step.name, message: `Step ${step.name} succeeded`, at: spec.at });
    } catch (err) {
      error = problemRecord('internal_error', `Step ${step.name} failed: ${err instanceof Error ? err.message : String(err)}`, baseUrl);
      await tx.update(pipelineSteps).set({ status: 'failed', attempts: 1, startedAt: spec.at, finishedAt: spec.at, error }).where(eqStep(spec.id, position));
      await writePipelineEvent(tx, run, { type: 'step_failed', level: 'error', step: step.name, message: String(error.detail), at: spec.at });
    }
  }
  const status = error ? 'failed' : 'succeeded';
  await tx.update(pipelineRuns).set({ status, finishedAt: spec.at, error }).where(eq(pipelineRuns.id, spec.id));
  await tx
    .update(operations)
    .set({ status, progress: error ? Math.min(99, Math.floor((Object.keys(outputs).length * 100) / def.steps.length)) : 100, result: error ? null : { runId: spec.id, outputs }, error, updatedAt: spec.at, finishedAt: spec.at })
    .where(eq(operations.id, spec.operationId));
  await writePipelineEvent(tx, run, { type: `run_${status}`, level: error ? 'error' : 'info', message: `Run ${status}`, data: error ? { error } : {}, at: spec.at });
}

function eqStep(runId: string, position: number) {
  return and(eq(pipelineSteps.runId, runId), eq(pipelineSteps.position, position));
}
