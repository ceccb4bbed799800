// "Did you mean …?": the nearest allowed word to a near miss (a typo, a transposition, a wrong case).

/** Edit distance counting an adjacent transposition as one edit (optimal string alignment). */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i < rows; i++)
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[rows - 1][cols - 1];
}

/**
 * The string candidate a string `word` most likely stands for, or null: an exact match ignoring case,
 * else the closest within a third of the word's length (at least one edit), earlier candidates
 * winning ties. Numbers are never guessed at: 4 is not a typo of 1.
 */
export function didYouMean(word: unknown, candidates: readonly unknown[]): string | null {
  if (typeof word !== 'string' || !word) return null;
  const w = word;
  const names = candidates.filter((c): c is string => typeof c === 'string');
  const folded = names.find((c) => c.toLowerCase() === w.toLowerCase() && c !== w);
  if (folded) return folded;
  let best: string | null = null;
  let bestDistance = Math.max(1, Math.floor(w.length / 3)) + 1;
  for (const c of names) {
    if (c === w) continue;
    const distance = editDistance(w.toLowerCase(), c.toLowerCase());
    if (distance < bestDistance) {
      best = c;
      bestDistance = distance;
    }
  }
  return best;
}

/** ` Did you mean X?` (with a leading space), or ''. */
export function didYouMeanText(word: unknown, candidates: readonly unknown[]): string {
  const hit = didYouMean(word, candidates);
  return hit === null ? '' : ` Did you mean ${hit}?`;
}
