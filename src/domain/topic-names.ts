// What MQTT allows in a topic level and in a topic prefix of one or more levels. Below config, which
// refuses an unusable sync.mqtt.topic_prefix when the file is loaded; sync builds its topic tree
// with them (src/sync/topics.ts).

// Control characters (C0, DEL, C1) and non-characters: the MQTT spec says topics should not hold
// them and brokers may refuse them; U+0000 must not appear at all. Lone surrogates cannot be
// encoded as UTF-8 (they would go out as U+FFFD, another topic than the one asked for).
const FORBIDDEN_CHARS = /[\p{Cc}\p{Cs}\p{Noncharacter_Code_Point}]/u;

/** Why `value` cannot be one topic level, or null when it can. */
export function topicLevelProblem(value: string): string | null {
  if (value.length === 0) return 'is empty';
  if (value.includes('/')) return 'contains "/" (it would add a topic level)';
  if (value.includes('+') || value.includes('#')) return 'contains an MQTT wildcard ("+" or "#")';
  if (FORBIDDEN_CHARS.test(value)) return 'contains a control character, a non-character or a lone surrogate';
  return null;
}

/** Why `value` cannot be a topic prefix of one or more levels, or null when it can. */
export function topicPrefixProblem(value: string): string | null {
  if (value.length === 0) return 'is empty';
  if (value.startsWith('$')) return 'starts with "$" (reserved for the broker)';
  const levels = value.split('/');
  if (levels.some((l) => l.length === 0)) return 'has an empty level (a leading, trailing or doubled "/")';
  for (const level of levels) {
    const problem = topicLevelProblem(level);
    if (problem) return problem;
  }
  return null;
}
