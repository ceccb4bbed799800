// What kind of process the compiler runs in. `svc generate --watch` compiles the same contract again
// and again: memos that cost more than they save on one compile (types.ts unit by unit on a small
// contract) pay from the second. startWatch sets longLived; every other command leaves it false.
export const session = { longLived: false };
