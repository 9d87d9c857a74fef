import { topicNameCharsMax } from './limits.js';

// A Unicode letter, a decimal digit, or one of . _ - (spec section 2).
const topicNamePattern = /^[\p{L}\p{Nd}._-]+$/u;

/**
 * Why a topic name is invalid, or null when it is valid. The answer says what is wrong, so a
 * refusal or a configuration error can name it.
 */
export function topicNameProblem(name: string): string | null {
  if (name.length === 0) return 'is empty, expected 1..249 characters';
  // Length counts characters (code points), not UTF-16 units or UTF-8 bytes.
  let chars = 0;
  for (const _ of name) chars++;
  if (chars > topicNameCharsMax) return `has ${chars} characters, expected at most ${topicNameCharsMax}`;
  if (!topicNamePattern.test(name)) return 'has a character other than a letter, a digit, ".", "_" or "-"';
  return null;
}

export function isValidTopicName(name: string): boolean {
  return topicNameProblem(name) === null;
}
