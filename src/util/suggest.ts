/**
 * "Did you mean …?" for a mistyped name: the closest candidate by edit
 * distance (a swap of two neighbours counts as one edit), if it is close
 * enough to be a typo rather than another word.
 */
export function closestName(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const distance = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  // A third of the word may be wrong (at least one letter): `trak` → track, not `x` → page.
  return best !== undefined && bestDistance > 0 && bestDistance <= Math.max(1, Math.floor(word.length / 3)) ? best : undefined;
}

/** ` (Did you mean track?)` (commander's wording for flags and commands), or "" when nothing is close. */
export function didYouMean(word: string, candidates: readonly string[]): string {
  const name = closestName(word, candidates);
  return name === undefined ? "" : ` (Did you mean ${name}?)`;
}

/** Optimal string alignment distance: insertions, deletions, substitutions, adjacent swaps. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) (d[0] as number[])[j] = j;
  for (let i = 1; i <= a.length; i++) {
    const row = d[i] as number[];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min((d[i - 1] as number[])[j]! + 1, row[j - 1]! + 1, (d[i - 1] as number[])[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(row[j]!, (d[i - 2] as number[])[j - 2]! + 1);
    }
  }
  return (d[a.length] as number[])[b.length]!;
}
