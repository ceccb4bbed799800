// This repository's composition root: the generated wiring module (generated/wiring.ts, made by
// `svc generate` for every project) with this repository's handlers. runtime/ never imports
// handlers/; it receives this registry as an argument (createApp, startServer, runServe). Folder
// graph: bin → {handlers, runtime, generated}, handlers → {runtime, generated}, generated →
// {runtime (types), handlers/index.ts}, runtime → nothing of these: every contract fact reaches it in
// this registry (test/contract/layout.test.ts). Registry fields only this API has (pipelines, intake
// templates) come from handlers/index.ts `registryExtras`.
import type { Registry } from '../runtime/app.ts';
import { registry } from '../generated/wiring.ts';

/** The registry of this contract and its handlers: what `svc serve` runs. */
export function svcRegistry(): Registry {
  return registry();
}
