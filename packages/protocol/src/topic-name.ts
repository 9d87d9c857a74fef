import { topicNameCharsMax } from './limits.js';

// A Unicode letter, a decimal digit, or one of . _ - (spec section 2).
const topicNamePattern = /^[\p{L}\p{Nd}._-]+$/u;
const topicNameChar = /^[\p{L}\p{Nd}._-]$/u;

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
  if (!topicNamePattern.test(name)) {
    return `has a character other than a letter, a digit, ".", "_" or "-": ${firstBadChar(name)}`;
  }
  return null;
}

/** `"/" at character 4`: which character to remove, counted from 1 in code points. */
function firstBadChar(name: string): string {
  let at = 0;
  for (const char of name) {
    at++;
    if (!topicNameChar.test(char)) return `${JSON.stringify(char)} at character ${at}`;
  }
  return 'none found'; // unreachable: the whole-name pattern failed on some character
}

export function isValidTopicName(name: string): boolean {
  return topicNameProblem(name) === null;
}
