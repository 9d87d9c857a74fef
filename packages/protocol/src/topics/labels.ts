import { labelKeyCharsMax, labelValueCharsMax } from '../limits.js';

/**
 * Label keys: a letter or digit first, then letters, digits and `. _ / -`. Values: letters, digits
 * and `. _ / : @ + -`, possibly empty. Neither may hold a space, a comma, `=`, `!` or a parenthesis:
 * those are the selector's grammar, so any label can be selected without quoting.
 */
const keyPattern = /^[A-Za-z0-9][A-Za-z0-9._/-]*$/;
const valuePattern = /^[A-Za-z0-9._/:@+-]*$/;

/** A label key the broker answers itself: `name` selects by topic name. */
export const NAME_LABEL = 'name';
/** Keys under this prefix belong to booblik (the cluster will set some); a spec may not set them. */
export const RESERVED_LABEL_PREFIX = 'booblik.';

/** Why a label key is not allowed, or null. */
export function labelKeyProblem(key: string): string | null {
  if (key.length === 0) return 'is empty, expected 1..63 characters';
  if (key.length > labelKeyCharsMax)
    return `has ${key.length} characters, expected at most ${labelKeyCharsMax}`;
  if (!keyPattern.test(key)) {
    return 'expected a letter or digit first, then letters, digits, ".", "_", "/" or "-"';
  }
  return null;
}

/** Why a label key may be selected on but not set in a spec, or null. */
export function reservedLabelProblem(key: string): string | null {
  if (key === NAME_LABEL) return `is reserved: "${NAME_LABEL}" selects by topic name`;
  if (key.startsWith(RESERVED_LABEL_PREFIX))
    return `is reserved: keys under "${RESERVED_LABEL_PREFIX}" belong to booblik`;
  return null;
}

/** Why a label value is not allowed, or null. */
export function labelValueProblem(value: string): string | null {
  if (value.length > labelValueCharsMax) {
    return `has ${value.length} characters, expected at most ${labelValueCharsMax}`;
  }
  if (!valuePattern.test(value)) return 'expected letters, digits, ".", "_", "/", ":", "@", "+" or "-"';
  return null;
}
