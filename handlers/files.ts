// files.*: bytes travel outside the API through signed URLs (runtime/files/). upload_url opens an
// upload slot and signs a 15-minute PUT URL bounded by the announced size; the upload route stores
// and hashes the bytes; register turns a received upload into a file (scanning until the worker
// checks it), and an intake document starts an extraction tracked as an operation; download_url
// signs a 5-minute GET URL for an available file.
// Visibility: a file of a client follows the client scope; a file without a client is internal
// (rule 2: only an operator signed in with OAuth registers or reads one). An upload slot belongs to
// the credential that opened it (another credential's upload is not found); one opened without a
// clientId gets its client at register, from clientId, intakeId or projectId.
import { and, eq } from 'drizzle-orm';
import { limits } from '../generated/contract.ts';
import type { FilesHandlers } from '../generated/handlers/files.ts';
import type { components } from '../generated/types.ts';
import { files, operations, uploads } from '../runtime/data/schema.ts';
import { extractions, fileLinks, intakeRecords, projects } from './data/schema.ts';
import { DOWNLOAD_PATH, fileUrlSecret, signUrl, UPLOAD_PATH } from '../runtime/files/signing.ts';
import type { HandlerContext } from '../runtime/handler-types.ts';
import { newId } from '../runtime/data/ids.ts';
import { newDomainId } from './data/ids.ts';
import { notFound, type FieldError } from '../runtime/problem-error.ts';
import { iso } from './mappers/time.ts';
import { actorName, invalidTransition, requireClient, validationFailed } from './shared.ts';

type Schemas = components['schemas'];
type FileRecord = Schemas['FileRecord'];
type FileRow = typeof files.$inferSelect;
/** What a file record says besides its row: its links (file_links) and its extraction's id. */
interface FileLinksOf {
  projectId: string | null;
  intakeId: string | null;
  extractionId: string | null;
}

export function toFileRecord(row: FileRow, links: FileLinksOf): FileRecord {
  return {
    id: row.id,
    clientId: row.clientId,
    projectId: links.projectId,
    intakeId: links.intakeId,
    name: row.name,
    contentType: row.contentType,
    sizeBytes: row.sizeBytes,
    sha256: row.sha256,
    purpose: row.purpose as FileRecord['purpose'],
    status: row.status as FileRecord['status'],
    extractionId: links.extractionId,
    uploadedBy: { kind: row.uploadedByKind as FileRecord['uploadedBy']['kind'], id: row.uploadedById, name: row.uploadedByName },
    createdAt: iso(row.createdAt),
  };
}

/** A client-bound file follows the client scope; an internal one is for OAuth operators only. */
function canReach(ctx: HandlerContext, clientId: string | null): boolean {
  return clientId === null ? ctx.policy.canWriteInternal() : ctx.policy.canReadClient(clientId);
}

async function uploadUrl(input: Schemas['FilesUploadUrlInput'], ctx: HandlerContext): Promise<Schemas['UploadUrl']> {
  const clientId = input.clientId ?? null;
  if (clientId !== null) {
    ctx.policy.assertClientInScope(clientId);
    await requireClient(ctx.db, clientId);
  }
  // Without a clientId the client is settled at files.register (by clientId, intakeId or projectId).
  if (input.sizeBytes > limits.uploadMaxBytes) throw validationFailed([{ pointer: '/sizeBytes', message: `must be at most ${limits.uploadMaxBytes}` }]);
  const id = newId('upload');
  const expiresAt = new Date(ctx.now.getTime() + limits.uploadUrlLifetimeSeconds * 1000);
  await ctx.db.insert(uploads).values({
    id,
    clientId,
    name: input.name,
    contentType: input.contentType,
    maxBytes: input.sizeBytes,
    status: 'pending',
    storageKey: `uploads/${id}`,
    requestedByKind: ctx.principal.kind,
    requestedById: ctx.principal.id,
    requestedByCredentialId: ctx.principal.credentialId,
    expiresAt,
    createdAt: ctx.now,
  });
  const url = signUrl(await fileUrlSecret(ctx.db), ctx.baseUrl, 'PUT', `${UPLOAD_PATH}/${id}`, expiresAt, input.sizeBytes);
  return { uploadId: id, url, method: 'PUT', headers: { 'content-type': input.contentType }, expiresAt: iso(expiresAt), maxBytes: input.sizeBytes };
}

async function register(input: Schemas['FilesRegisterInput'], ctx: HandlerContext): Promise<FileRecord> {
  const [upload] = await ctx.db.select().from(uploads).where(eq(uploads.id, input.uploadId)).for('update');
  if (!upload || upload.requestedByCredentialId !== ctx.principal.credentialId) throw notFound('Upload');
  if (upload.status === 'registered') throw invalidTransition(`Upload ${upload.id} is already registered.`);
  if (upload.status !== 'received') throw invalidTransition(`Upload ${upload.id} has not arrived; PUT the bytes to its signed URL first.`);

  const errors: FieldError[] = [];
  let clientId = upload.clientId;
  if (input.clientId !== undefined && clientId !== null && input.clientId !== clientId) {
    errors.push({ pointer: '/clientId', message: `the upload was made for client ${clientId}` });
  }
  if (input.clientId !== undefined && clientId === null) {
    ctx.policy.assertClientInScope(input.clientId);
    await requireClient(ctx.db, input.clientId);
    clientId = input.clientId;
  }
  let intakeId: string | null = null;
  if (input.intakeId !== undefined) {
    const [record] = await ctx.db.select({ clientId: intakeRecords.clientId }).from(intakeRecords).where(eq(intakeRecords.id, input.intakeId));
    if (!record || !ctx.policy.canReadClient(record.clientId)) throw notFound('Intake record');
    if (clientId === null) clientId = record.clientId;
    if (record.clientId !== clientId) errors.push({ pointer: '/intakeId', message: `intake record ${input.intakeId} belongs to another client` });
    intakeId = input.intakeId;
  }
  if (input.projectId !== undefined) {
    const [project] = await ctx.db.select({ clientId: projects.clientId }).from(projects).where(eq(projects.id, input.projectId));
    if (!project || !ctx.policy.canReadClient(project.clientId)) throw notFound('Project');
    if (clientId === null) clientId = project.clientId;
    if (project.clientId !== clientId) errors.push({ pointer: '/projectId', message: `project ${input.projectId} belongs to another client` });
  }
  const purpose = input.purpose ?? (intakeId !== null ? 'intake_document' : 'attachment');
  if (purpose === 'intake_document' && intakeId === null) errors.push({ pointer: '/intakeId', message: 'an intake_document names its intake record' });
  if (clientId === null && !canReach(ctx, null)) {
    errors.push({ pointer: '/clientId', message: 'name the client the file belongs to (only an operator signed in with OAuth keeps internal files)' });
  }
  if (errors.length > 0) throw validationFailed(errors);
  if (!canReach(ctx, clientId)) throw notFound('Upload');

  const id = newId('file');
  let extractionId: string | null = null;
  let extraction: typeof extractions.$inferInsert | null = null;
  if (purpose === 'intake_document') {
    extractionId = newDomainId('extraction');
    const operationId = newId('operation');
    await ctx.db.insert(operations).values({
      id: operationId,
      kind: 'extraction',
      status: 'queued',
      progress: 0,
      requestedByKind: ctx.principal.kind,
      requestedById: ctx.principal.id,
      requestedByName: await actorName(ctx.db, ctx.principal.id),
      requestedByCredentialId: ctx.principal.credentialId,
      subjectId: extractionId,
      createdAt: ctx.now,
      updatedAt: ctx.now,
    });
    extraction = { id: extractionId, clientId: clientId!, fileId: id, intakeId, operationId, status: 'queued', createdAt: ctx.now };
  }
  const [row] = await ctx.db
    .insert(files)
    .values({
      id,
      uploadId: upload.id,
      clientId,
      name: input.name ?? upload.name,
      contentType: upload.contentType,
      sizeBytes: upload.sizeBytes!,
      sha256: upload.sha256!,
      purpose,
      status: 'scanning',
      storageKey: upload.storageKey,
      uploadedByKind: ctx.principal.kind,
      uploadedById: ctx.principal.id,
      uploadedByName: await actorName(ctx.db, ctx.principal.id),
      createdAt: ctx.now,
    })
    .returning();
  const links = { projectId: input.projectId ?? null, intakeId, extractionId };
  // The links and the extraction name their file (foreign keys), so they follow the file row.
  if (links.projectId !== null || intakeId !== null) await ctx.db.insert(fileLinks).values({ fileId: id, projectId: links.projectId, intakeId });
  if (extraction) await ctx.db.insert(extractions).values(extraction);
  await ctx.db.update(uploads).set({ status: 'registered' }).where(and(eq(uploads.id, upload.id), eq(uploads.status, 'received')));
  return toFileRecord(row!, links);
}

async function downloadUrl(input: Schemas['FilesDownloadUrlInput'], ctx: HandlerContext): Promise<Schemas['DownloadUrl']> {
  const [row] = await ctx.db.select().from(files).where(eq(files.id, input.file_id));
  if (!row || !canReach(ctx, row.clientId)) throw notFound('File');
  if (row.status !== 'available') throw invalidTransition(`File ${row.id} is ${row.status}; only an available file has a download URL.`);
  const expiresAt = new Date(ctx.now.getTime() + limits.downloadUrlLifetimeSeconds * 1000);
  const url = signUrl(await fileUrlSecret(ctx.db), ctx.baseUrl, 'GET', `${DOWNLOAD_PATH}/${row.id}`, expiresAt);
  return { fileId: row.id, url, expiresAt: iso(expiresAt) };
}

export const filesHandlers = {
  'files.download_url': downloadUrl,
  'files.upload_url': uploadUrl,
  'files.register': register,
} satisfies FilesHandlers;
