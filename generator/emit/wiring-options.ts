// What the wiring module (generated/wiring.ts, emit/wiring.ts) needs beyond the contract: where the
// project's handlers live relative to the output directory. Set by the CLI from the project
// configuration (svc.config.json) before it compiles; the default is this repository's layout
// (handlers/ beside generated/). Part of the content-hash cache's key (cache.ts inputsKey).
export interface WiringOptions {
  /** The handlers module's import specifier from the output directory, e.g. `../handlers/index.ts`. */
  handlersIndex: string;
}

export const DEFAULT_WIRING: WiringOptions = { handlersIndex: '../handlers/index.ts' };

let current: WiringOptions = DEFAULT_WIRING;

export function setWiringOptions(options: WiringOptions): void {
  current = options;
}

export function wiringOptions(): WiringOptions {
  return current;
}
