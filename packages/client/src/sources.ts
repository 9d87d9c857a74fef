/**
 * What a topic handle and a consumer need of whatever they send through: a Connection or a Client.
 * Interfaces, so that those two import neither (each of them makes topics and consumers).
 */
import type { ProduceResult, TopicMetadata } from '@booblik/protocol';
import type { FetchResult } from './fetch-result.js';
import type { ConnectOptions, FetchOptions, ProduceOptions, RequestOptions } from './request-options.js';

/** What a Topic reads partitions with and sends through. */
export interface TopicSource {
  metadata(...topics: string[]): Promise<TopicMetadata[]>;
  produce(
    topic: string,
    partition: number,
    records: readonly Uint8Array[],
    options?: ProduceOptions,
  ): Promise<ProduceResult | null>;
}

/** What a Consumer fetches through, and dials again after a loss. */
export interface FetchSource {
  /** 'open' while it takes requests. */
  readonly state: string;
  readonly options: Pick<ConnectOptions, 'clock'>;
  fetch(request: FetchOptions, options?: RequestOptions): Promise<FetchResult>;
  speaksFetchEpochs(): Promise<boolean>;
  redial(): Promise<FetchSource>;
  close(): Promise<void>;
  /** A Client has it: it follows a partition's route itself (a Connection leaves that to its broker). */
  routeOf?(topic: string, partition: number): string | undefined;
}
