/**
 * Label selectors, in Gazette's (and Kubernetes') grammar:
 *
 *   selector    => "" | requirement ("," requirement)*          (comma = and; "" matches everything)
 *   requirement => key "=" value | key "!=" value | key | "!" key
 *                | key "in" "(" value ("," value)* ")" | key "notin" "(" value ("," value)* ")"
 *
 * Spaces around tokens are ignored. `k!=v` and `k notin (...)` also match topics without `k`. The key
 * `name` matches the topic's name.
 */
import { selectorCharsMax } from '../limits.js';
import { labelKeyProblem, labelValueProblem, NAME_LABEL } from './labels.js';

export type Requirement =
  | { key: string; op: 'exists' | 'notExists' }
  | { key: string; op: 'in' | 'notIn'; values: readonly string[] };

export interface Selector {
  readonly source: string;
  readonly requirements: readonly Requirement[];
}

/** A selector that does not parse; the message says where (`selector at 7: expected ")"`). */
export class SelectorError extends Error {
  override name = 'SelectorError';
}

// Letters beyond ASCII too: a `name` value is a topic name, and those may be in any script.
const tokenChar = /[\p{L}\p{Nd}._/:@+-]/u;

export function parseSelector(source: string): Selector {
  if (source.length > selectorCharsMax) {
    throw new SelectorError(`selector: ${source.length} characters, expected at most ${selectorCharsMax}`);
  }
  let at = 0;
  const fail = (what: string): never => {
    throw new SelectorError(`selector ${JSON.stringify(source)} at ${at}: ${what}`);
  };
  const skipSpace = () => {
    while (at < source.length && source[at] === ' ') at++;
  };
  const token = (): string => {
    const start = at;
    while (at < source.length && tokenChar.test(source[at]!)) at++;
    return source.slice(start, at);
  };
  const key = (): string => {
    skipSpace();
    const k = token();
    const problem = labelKeyProblem(k);
    if (problem !== null) fail(`label key ${JSON.stringify(k)} ${problem}`);
    return k;
  };
  const value = (forKey: string): string => {
    skipSpace();
    const v = token();
    const problem = forKey === NAME_LABEL ? null : labelValueProblem(v);
    if (problem !== null) fail(`label value ${JSON.stringify(v)} ${problem}`);
    return v;
  };
  const set = (forKey: string): string[] => {
    skipSpace();
    if (source[at] !== '(') fail('expected "("');
    at++;
    const values = [value(forKey)];
    skipSpace();
    while (source[at] === ',') {
      at++;
      values.push(value(forKey));
      skipSpace();
    }
    if (source[at] !== ')') fail('expected "," or ")"');
    at++;
    return values;
  };

  const requirements: Requirement[] = [];
  skipSpace();
  if (at === source.length) return { source, requirements };
  for (;;) {
    skipSpace();
    if (source[at] === '!') {
      at++;
      requirements.push({ key: key(), op: 'notExists' });
    } else {
      const k = key();
      skipSpace();
      if (source.startsWith('!=', at)) {
        at += 2;
        requirements.push({ key: k, op: 'notIn', values: [value(k)] });
      } else if (source[at] === '=') {
        at += source.startsWith('==', at) ? 2 : 1;
        requirements.push({ key: k, op: 'in', values: [value(k)] });
      } else if (/^in[ (]/.test(source.slice(at, at + 3))) {
        at += 2;
        requirements.push({ key: k, op: 'in', values: set(k) });
      } else if (/^notin[ (]/.test(source.slice(at, at + 6))) {
        at += 5;
        requirements.push({ key: k, op: 'notIn', values: set(k) });
      } else {
        requirements.push({ key: k, op: 'exists' });
      }
    }
    skipSpace();
    if (at === source.length) break;
    if (source[at] !== ',') fail('expected "," between requirements');
    at++;
  }
  return { source, requirements };
}

/** Whether a topic with this name and these labels matches every requirement. */
export function selectorMatches(
  selector: Selector,
  name: string,
  labels: Readonly<Record<string, string>>,
): boolean {
  for (const r of selector.requirements) {
    const value = r.key === NAME_LABEL ? name : Object.hasOwn(labels, r.key) ? labels[r.key] : undefined;
    switch (r.op) {
      case 'exists':
        if (value === undefined) return false;
        break;
      case 'notExists':
        if (value !== undefined) return false;
        break;
      case 'in':
        if (value === undefined || !r.values.includes(value)) return false;
        break;
      case 'notIn':
        if (value !== undefined && r.values.includes(value)) return false;
        break;
    }
  }
  return true;
}
