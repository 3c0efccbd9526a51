import { readdirSync } from "node:fs";
import { join } from "node:path";

/** Every `.md` file under `dir`, sorted, subfolders included. */
export function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => (entry.isDirectory() ? markdownFiles(join(dir, entry.name)) : entry.name.endsWith(".md") ? [join(dir, entry.name)] : []))
    .sort();
}

/** The lines of `markdown` outside fenced code blocks, with their 1-based numbers. */
function proseLines(markdown: string): { line: number; text: string }[] {
  const prose: { line: number; text: string }[] = [];
  let fence: string | undefined;
  markdown.split("\n").forEach((text, i) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(text)?.[1];
    if (marker !== undefined && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined;
      return;
    }
    if (fence === undefined) prose.push({ line: i + 1, text });
  });
  return prose;
}

/**
 * A heading's anchor as GitHub writes it: lower case, link syntax reduced to its text, every
 * character but letters, digits, `_`, `-` and spaces dropped, spaces turned into `-`.
 */
export function slugOf(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, "")
    .replace(/ /g, "-");
}

/** The anchors of every heading in `markdown`; a repeated one gets `-1`, `-2`, … as on GitHub. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  for (const { text } of proseLines(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text)?.[1];
    if (heading === undefined) continue;
    const slug = slugOf(heading);
    let unique = slug;
    for (let n = 1; anchors.has(unique); n++) unique = `${slug}-${n}`;
    anchors.add(unique);
  }
  return anchors;
}

/** Every inline link `[text](target)` outside code (fenced blocks and `code spans`). */
export function linksOf(markdown: string): { line: number; target: string }[] {
  return proseLines(markdown).flatMap(({ line, text }) =>
    [...text.replace(/`[^`]*`/g, "``").matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => ({ line, target: match[1] as string })),
  );
}

/** The code blocks fenced ```` ```lang ```` in the section of `markdown` under `heading` (a whole heading line), up to the next heading of its level or above. */
export function sectionBlocks(markdown: string, heading: string, lang: string): string[] {
  const start = markdown.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`no heading ${heading}`);
  const level = /^#+/.exec(heading)?.[0].length ?? 1;
  const rest = markdown.slice(start + heading.length + 2);
  const end = rest.search(new RegExp(`^#{1,${level}} `, "m"));
  const section = end < 0 ? rest : rest.slice(0, end);
  return [...section.matchAll(new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\`$`, "gm"))].map((match) => match[1] as string);
}

/** A fenced code block: its info string (`sh runnable`), its opening fence's line (1-based), the nearest heading above it and its lines. */
export interface FencedBlock {
  info: string;
  line: number;
  heading: string;
  body: string[];
}

/** The ```` ``` ```` fenced blocks of `markdown`, in order. */
export function fencedBlocks(markdown: string): FencedBlock[] {
  const blocks: FencedBlock[] = [];
  const lines = markdown.split("\n");
  let heading = "";
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i] as string;
    const title = /^#{1,6} (.*)$/.exec(text)?.[1];
    if (title !== undefined) heading = title.trim();
    const fence = /^```(.*)$/.exec(text);
    if (!fence) continue;
    const end = lines.findIndex((candidate, j) => j > i && candidate.startsWith("```"));
    if (end < 0) break;
    blocks.push({ info: (fence[1] as string).trim(), line: i + 1, heading, body: lines.slice(i + 1, end) });
    i = end;
  }
  return blocks;
}
