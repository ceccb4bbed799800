// tasks / task_comments rows -> the contract's Task and TaskComment resources.
import type { PrincipalKind } from '../../runtime/contract-types.ts';
import type { taskComments, tasks } from '../../runtime/db/schema.ts';
import { etagFor } from '../../runtime/etag.ts';
import { iso } from './time.ts';

export type TaskRow = typeof tasks.$inferSelect;
export type TaskCommentRow = typeof taskComments.$inferSelect;

export type TaskStatus = 'open' | 'in_progress' | 'blocked' | 'done';
export type TaskPriority = 'low' | 'normal' | 'high' | 'urgent';

export interface Task {
  id: string;
  clientId: string | null;
  projectId: string | null;
  title: string;
  description: string;
  status: TaskStatus;
  priority: TaskPriority;
  ownerId: string | null;
  assigneeIds: string[];
  dueDate: string | null;
  createdAt: string;
  updatedAt: string;
  completedAt: string | null;
  etag: string;
}

export interface TaskComment {
  id: string;
  taskId: string;
  author: { kind: PrincipalKind; id: string; name?: string | null };
  body: string;
  createdAt: string;
}

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
