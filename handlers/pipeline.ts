// pipeline.*: not implemented yet; every operation answers 501 not_implemented.
import { notImplemented } from '../runtime/not-implemented.ts';

export const pipelineHandlers = {
  'pipeline.runs.list': notImplemented('pipeline.runs.list'),
  'pipeline.runs.get': notImplemented('pipeline.runs.get'),
  'pipeline.events.list': notImplemented('pipeline.events.list'),
  'pipeline.run.start': notImplemented('pipeline.run.start'),
  'pipeline.run.rerun_partial': notImplemented('pipeline.run.rerun_partial'),
};
