// projects rows -> the contract's Project resource.
import type { components } from '../../generated/types.ts';
import type { projects } from '../data/schema.ts';
import { etagFor } from '../../runtime/pipeline/etag.ts';
import { iso } from './time.ts';

export type ProjectRow = typeof projects.$inferSelect;

export const PROJECT_STAGES = ['discovery', 'onboarding', 'build', 'review', 'launch', 'live'] as const;
// The contract's shapes, from the generated types (one source of truth).
type Schemas = components['schemas'];
export type ProjectStage = (typeof PROJECT_STAGES)[number] & Schemas['Project']['stage'];
export type ProjectStatus = Schemas['Project']['status'];
export type Project = Schemas['Project'];

export function projectEtag(row: Pick<ProjectRow, 'id' | 'version'>): string {
  return etagFor(row.id, row.version);
}

export function toProject(row: ProjectRow): Project {
  return {
    id: row.id,
    clientId: row.clientId,
    name: row.name,
    description: row.description,
    stage: row.stage as ProjectStage,
    status: row.status as ProjectStatus,
    startDate: row.startDate,
    targetDate: row.targetDate,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
    etag: projectEtag(row),
  };
}

/** The stage after this one, or null for live (final). */
export function nextStage(stage: string): ProjectStage | null {
  const i = PROJECT_STAGES.indexOf(stage as ProjectStage);
  if (i < 0 || i === PROJECT_STAGES.length - 1) return null;
  return PROJECT_STAGES[i + 1];
}
