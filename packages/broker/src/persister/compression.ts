import type { TopicSpec } from '@booblik/protocol';

/**
 * The label that asks for compressed uploads: `compression: gzip` in a topic's labels. A label, not a
 * spec field: TopicSpec's bytes are fixed by APPLY v1 and LIST v1, so a field would need new versions
 * of both, while a label travels already, shows in `booblik topics list` and can be selected on.
 */
export const COMPRESSION_LABEL = 'compression';
export const COMPRESSIONS = ['none', 'gzip'] as const;
export type Compression = (typeof COMPRESSIONS)[number];

export function compressionOf(spec: Pick<TopicSpec, 'labels'>): Compression {
  return spec.labels[COMPRESSION_LABEL] === 'gzip' ? 'gzip' : 'none';
}

/** Why a spec's compression label cannot be used, or null. */
export function compressionProblem(spec: Pick<TopicSpec, 'labels'>): string | null {
  const value = spec.labels[COMPRESSION_LABEL];
  if (value === undefined || (COMPRESSIONS as readonly string[]).includes(value)) return null;
  return `labels.${COMPRESSION_LABEL}: ${JSON.stringify(value)}, expected one of ${COMPRESSIONS.join(', ')}`;
}
