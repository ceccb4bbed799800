// Reads a V8 .cpuprofile (node --cpu-prof) and prints where the time went: self time by function and
// by file/package, and the share idle/GC. Usage: node scripts/profile-summary.mjs <file> [--top 25]
import { readFileSync } from 'node:fs';

const file = process.argv[2];
const topIdx = process.argv.indexOf('--top');
const top = topIdx > 0 ? Number(process.argv[topIdx + 1]) : 25;
// --last-ms N: only the last N ms of the profile (the load window, not start-up).
const lastIdx = process.argv.indexOf('--last-ms');
const lastMs = lastIdx > 0 ? Number(process.argv[lastIdx + 1]) : Infinity;
const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map();
const times = [];
for (let i = 0, t = profile.startTime; i < profile.samples.length; i++) times.push((t += profile.timeDeltas[i] ?? 0));
const from = profile.endTime - lastMs * 1000;
for (let i = 0; i < profile.samples.length; i++) {
  if (times[i] < from) continue;
  const dt = profile.timeDeltas[i] ?? 0;
  self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + dt);
}
const total = [...self.values()].reduce((a, b) => a + b, 0);
const byFn = new Map();
const byFile = new Map();
const where = (url) => {
  if (!url) return '(native)';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return `pkg:${m[1]}`;
  if (url.startsWith('node:')) return url;
  const r = /\/(dist\/)?((?:bin|runtime|handlers|generated|generator)\/.*)$/.exec(url);
  return r ? r[2] : url;
};
for (const [id, us] of self) {
  const n = byId.get(id);
  const cf = n.callFrame;
  const fn = `${cf.functionName || '(anon)'} ${where(cf.url)}:${cf.lineNumber + 1}`;
  byFn.set(fn, (byFn.get(fn) ?? 0) + us);
  const f = cf.url ? where(cf.url) : cf.functionName;
  byFile.set(f, (byFile.get(f) ?? 0) + us);
}
const pct = (us) => `${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms`;
console.log(`total ${(total / 1000).toFixed(0)} ms sampled`);
console.log('\n-- self time by file / package');
for (const [k, v] of [...byFile].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(v)}  ${k}`);
console.log('\n-- self time by function');
for (const [k, v] of [...byFn].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(v)}  ${k}`);
