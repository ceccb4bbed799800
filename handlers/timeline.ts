// timeline.*: not implemented yet; every operation answers 501 not_implemented.
import { notImplemented } from '../runtime/not-implemented.ts';
import type { TimelineHandlers } from '../generated/handlers/timeline.ts';

export const timelineHandlers = {
  'timeline.list': notImplemented('timeline.list'),
} satisfies TimelineHandlers;
