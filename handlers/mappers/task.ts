// tasks / task_comments rows -> the contract's Task and TaskComment resources.
import type { components } from '../../generated/types.ts';
import type { PrincipalKind } from '../../runtime/contract-types.ts';
import type { taskComments, tasks } from '../data/schema.ts';
import { etagFor } from '../../runtime/pipeline/etag.ts';
import { iso } from './time.ts';

export type TaskRow = typeof tasks.$inferSelect;
export type TaskCommentRow = typeof taskComments.$inferSelect;

// The contract's shapes, from the generated types (one source of truth).
type Schemas = components['schemas'];
export type TaskStatus = Schemas['TaskStatus'];
export type TaskPriority = Schemas['TaskPriority'];
export type Task = Schemas['Task'];
export type TaskComment = Schemas['TaskComment'];

export function taskEtag(row: Pick<TaskRow, 'id' | 'version'>): string {
  return etagFor(row.id, row.version);
}

export function toTask(row: TaskRow): Task {
  return {
    id: row.id,
    clientId: row.clientId,
    projectId: row.projectId,
    title: row.title,
    description: row.description,
    status: row.status as TaskStatus,
    priority: row.priority as TaskPriority,
    ownerId: row.ownerId,
    assigneeIds: [...row.assigneeIds],
    dueDate: row.dueDate,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
    completedAt: iso(row.completedAt),
    etag: taskEtag(row),
  };
}

export function toTaskComment(row: TaskCommentRow): TaskComment {
  return {
    id: row.id,
    taskId: row.taskId,
    author: { kind: row.authorKind as PrincipalKind, id: row.authorId, name: row.authorName },
    body: row.body,
    createdAt: iso(row.createdAt),
  };
}

/** The owner first, then co-assignees, without duplicates. */
export function assigneeSet(ownerId: string | null | undefined, coAssignees: readonly string[] = []): string[] {
  const out: string[] = [];
  for (const id of [ownerId, ...coAssignees]) if (id && !out.includes(id)) out.push(id);
  return out;
}
