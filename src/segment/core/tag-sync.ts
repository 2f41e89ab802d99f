export interface TagDiff {
  added: string[];
  removed: string[];
}

/**
 * Leaf's two-loop updateCacheFromDb: add every DB tag the cache lacks, then drop every
 * cached tag the DB no longer has. Unlike Leaf, an empty table empties the cache (Leaf returned
 * early and kept serving deleted tags). Mutates `cache`.
 */
export function syncTags<B>(cache: Map<string, B>, dbTags: readonly string[], create: (tag: string) => B): TagDiff {
  const added: string[] = [];
  for (const tag of dbTags) {
    if (!cache.has(tag)) {
      cache.set(tag, create(tag));
      added.push(tag);
    }
  }
  const dbTagSet = new Set(dbTags);
  const removed: string[] = [];
  for (const tag of [...cache.keys()]) {
    if (!dbTagSet.has(tag)) {
      cache.delete(tag);
      removed.push(tag);
    }
  }
  return { added, removed };
}
