// Renames class members or exported declarations across the program with TypeScript's own rename
// (the language service's findRenameLocations: every reference, comments and strings excluded), so a
// rename touches no file by hand. Usage:
//   node scripts/rename-members.mjs FILE OLD=NEW [OLD=NEW ...]
// FILE declares each OLD (a class member or a top-level declaration). The program is tsconfig.json's.
import ts from 'typescript';
import fs from 'node:fs';
import path from 'node:path';

const [file, ...pairs] = process.argv.slice(2);
if (!file || pairs.length === 0) {
  console.error('usage: node scripts/rename-members.mjs FILE OLD=NEW [OLD=NEW ...]');
  process.exit(2);
}
const root = process.cwd();
const parsed = ts.getParsedCommandLineOfConfigFile(path.join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => { throw new Error(String(d.messageText)); } });
const files = new Map(parsed.fileNames.map((f) => [path.resolve(f), { version: 0, text: fs.readFileSync(f, 'utf8') }]));
const host = {
  getScriptFileNames: () => [...files.keys()],
  getScriptVersion: (f) => String(files.get(path.resolve(f))?.version ?? 0),
  getScriptSnapshot: (f) => {
    const known = files.get(path.resolve(f));
    const text = known ? known.text : fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : undefined;
    return text === undefined ? undefined : ts.ScriptSnapshot.fromString(text);
  },
  getCurrentDirectory: () => root,
  getCompilationSettings: () => parsed.options,
  getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
  fileExists: ts.sys.fileExists,
  readFile: ts.sys.readFile,
  readDirectory: ts.sys.readDirectory,
};
const service = ts.createLanguageService(host, ts.createDocumentRegistry());
const target = path.resolve(file);

for (const pair of pairs) {
  const [from, to] = pair.split('=');
  const source = service.getProgram().getSourceFile(target);
  let at = -1;
  const visit = (node) => {
    if (at >= 0) return;
    if ((ts.isMethodDeclaration(node) || ts.isGetAccessorDeclaration(node) || ts.isPropertyDeclaration(node) || ts.isFunctionDeclaration(node) || ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node) || ts.isVariableDeclaration(node)) && node.name?.getText(source) === from) {
      at = node.name.getStart(source);
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (at < 0) throw new Error(`${from}: no declaration in ${file}`);
  const locations = service.findRenameLocations(target, at, false, false, { providePrefixAndSuffixTextForRename: false }) ?? [];
  const byFile = new Map();
  for (const l of locations) {
    const f = path.resolve(l.fileName);
    if (!byFile.has(f)) byFile.set(f, []);
    byFile.get(f).push(l.textSpan);
  }
  for (const [f, spans] of byFile) {
    const entry = files.get(f);
    let text = entry.text;
    for (const s of spans.sort((a, b) => b.start - a.start)) text = text.slice(0, s.start) + to + text.slice(s.start + s.length);
    entry.text = text;
    entry.version++;
    fs.writeFileSync(f, text);
  }
  console.log(`${from} -> ${to}: ${locations.length} references in ${byFile.size} files`);
}
