import { join } from "node:path";
import ts from "typescript";
import { ROOT } from "./loaded-modules.js";

/** A package entry: its name as imported and its declaration file under the repository. */
export interface Entry {
  specifier: string;
  dts: string;
}

/**
 * What an entry offers, read as a user meets it: the values of `import()` by package name (the
 * built dist/) and the names of its .d.ts. One line per name, `kind name`: class, function, value
 * (anything else a module holds at run time) or type (interfaces, type aliases, classes exported
 * as types only). `declaredValues` are the .d.ts names that are not type-only: they must be
 * exactly the run-time names.
 */
export async function exportsOf(
  entry: Entry,
  entries: readonly Entry[] = [entry],
): Promise<{ face: string[]; runtimeNames: string[]; declaredValues: string[] }> {
  const module = (await import(entry.specifier)) as Record<string, unknown>;
  const runtime = new Map(Object.entries(module).map(([name, value]) => [name, kindOf(value)]));
  const { exported, resolve, isTypeOnly } = declarations(entries);
  const symbols = exported.get(entry.specifier) ?? [];
  const names = new Set([...runtime.keys(), ...symbols.map((symbol) => symbol.name)]);
  const declaredValues = symbols.filter((symbol) => !isTypeOnly(symbol) && resolve(symbol).flags & ts.SymbolFlags.Value).map((symbol) => symbol.name);
  return {
    face: [...names].map((name) => `${runtime.get(name) ?? "type"} ${name}`).sort(),
    runtimeNames: [...runtime.keys()].sort(),
    declaredValues: declaredValues.sort(),
  };
}

function kindOf(value: unknown): string {
  if (typeof value !== "function") return "value";
  return /^class[\s{]/.test(Function.prototype.toString.call(value)) ? "class" : "function";
}

/**
 * Types of this package that an exported declaration names but no entry exports: a user
 * could not write them down. Private members (declared without types) and the constructors of
 * classes exported as types only (nobody can call them) are not public.
 */
export function unexportedTypes(entries: readonly Entry[]): string[] {
  const { exported, resolve, isTypeOnly, checker } = declarations(entries);
  const all = [...exported.values()].flat();
  const nameable = new Set(all.map(resolve));
  const typeOnlyClasses = new Set(all.filter((symbol) => isTypeOnly(symbol) && resolve(symbol).flags & ts.SymbolFlags.Class).map(resolve));
  const dist = join(ROOT, "dist");
  const leaks = new Set<string>();
  const visit = (node: ts.Node): void => {
    if (ts.canHaveModifiers(node) && ts.getModifiers(node)?.some((modifier) => modifier.kind === ts.SyntaxKind.PrivateKeyword)) return;
    if (ts.isConstructorDeclaration(node) && typeOnlyClasses.has(checker.getSymbolAtLocation(node.parent.name as ts.Identifier) as ts.Symbol)) return;
    if (ts.isTypeReferenceNode(node) || ts.isExpressionWithTypeArguments(node)) {
      const symbol = checker.getSymbolAtLocation(ts.isTypeReferenceNode(node) ? node.typeName : node.expression);
      const target = symbol && resolve(symbol);
      const file = target?.declarations?.[0]?.getSourceFile().fileName;
      if (target && file?.startsWith(dist) && !(target.flags & ts.SymbolFlags.TypeParameter) && !nameable.has(target)) leaks.add(target.name);
    }
    ts.forEachChild(node, visit);
  };
  for (const target of nameable) for (const declaration of target.declarations ?? []) visit(declaration);
  return [...leaks].sort();
}

let cached: { key: string; value: ReturnType<typeof read> } | undefined;

/** One program over the entries' .d.ts files (memoized: building it is most of the cost). */
function declarations(entries: readonly Entry[]): ReturnType<typeof read> {
  const key = JSON.stringify(entries);
  if (cached?.key !== key) cached = { key, value: read(entries) };
  return cached.value;
}

function read(entries: readonly Entry[]) {
  const files = entries.map((entry) => join(ROOT, entry.dts));
  // Only this package's own declarations matter here: other packages' (Node's, zod's, undici's) are
  // read as empty modules, which spares seconds of parsing.
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    noEmit: true,
    noLib: true,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const dist = join(ROOT, "dist");
  const readSource = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, language, ...rest) =>
    fileName.startsWith(dist) ? readSource(fileName, language, ...rest) : ts.createSourceFile(fileName, "export {};", language);
  const program = ts.createProgram(files, options, host);
  const checker = program.getTypeChecker();
  const exported = new Map<string, ts.Symbol[]>();
  entries.forEach((entry, i) => {
    const source = program.getSourceFile(files[i] as string);
    const moduleSymbol = source && checker.getSymbolAtLocation(source);
    if (!moduleSymbol) throw new Error(`no declarations at ${entry.dts}: run npm run build`);
    exported.set(entry.specifier, checker.getExportsOfModule(moduleSymbol));
  });
  const resolve = (symbol: ts.Symbol): ts.Symbol => (symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol);
  const isTypeOnly = (symbol: ts.Symbol): boolean =>
    (symbol.declarations ?? []).some((declaration) => ts.isExportSpecifier(declaration) && (declaration.isTypeOnly || declaration.parent.parent.isTypeOnly));
  return { exported, resolve, isTypeOnly, checker };
}

/**
 * The names the table after the line `` `specifier` `` … `:` of `markdown`'s "Every export" section
 * lists in its first column (`name`, `name(…)`, `Name<M>`), in order.
 */
export function exportTable(markdown: string, specifier: string): string[] {
  const section = markdown.slice(markdown.indexOf("\n## Every export"));
  const lines = section.split("\n");
  const start = lines.findIndex((line) => line.startsWith(`\`${specifier}\``) && line.endsWith(":"));
  if (start < 0) return [];
  const rows = lines
    .slice(start + 1)
    .filter((line, i, all) => line.startsWith("|") && all.slice(0, i).every((before) => before === "" || before.startsWith("|")));
  return rows.slice(2).flatMap((row) => [...(row.split("|")[1] ?? "").matchAll(/`([A-Za-z_$][\w$]*)/g)].map((match) => match[1] as string));
}
