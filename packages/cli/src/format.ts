/** How consumed records are printed, one per line. */
export const formats = ['text', 'hex', 'json'] as const;
export type Format = (typeof formats)[number];

export interface PrintedRecord {
  topic: string;
  partition: number;
  offset: number;
  payload: Buffer;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * text: the payload's bytes as they are, then '\n'. hex: lowercase hex. json: one object per line
 * with `payload` as a string when the bytes are UTF-8, else `payloadBase64` (JSON cannot carry bytes).
 */
export function formatRecord(record: PrintedRecord, format: Format): Buffer | string {
  switch (format) {
    case 'text':
      return Buffer.concat([record.payload, Buffer.from('\n')]);
    case 'hex':
      return `${record.payload.toString('hex')}\n`;
    case 'json': {
      const { topic, partition, offset } = record;
      let text: string | undefined;
      try {
        text = utf8.decode(record.payload);
      } catch {
        text = undefined;
      }
      const body =
        text === undefined
          ? { topic, partition, offset, payloadBase64: record.payload.toString('base64') }
          : { topic, partition, offset, payload: text };
      return `${JSON.stringify(body)}\n`;
    }
  }
}
