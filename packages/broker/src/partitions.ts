import path from 'node:path';
import { type LogConfig, type Logger, type OpenReport, Partition } from '@booblik/log';
import type { TopicSpec } from './config/keys.js';

export interface PartitionReport extends OpenReport {
  topic: string;
  partition: number;
}

/**
 * The one place a partition is looked up by (topic, partition). Topics can be added at runtime
 * (`addTopic`); nothing else holds the topic set. Later, a lookup can answer with a partition whose
 * primary lives on another broker.
 */
export class PartitionRegistry {
  private readonly topics = new Map<string, Partition[]>();

  constructor(
    private readonly dataDir: string,
    private readonly logConfig: Readonly<LogConfig>,
    private readonly logger: Logger,
  ) {}

  /** Opens (recovering) every partition of a topic and makes it servable. */
  addTopic(spec: TopicSpec): PartitionReport[] {
    if (this.topics.has(spec.name)) throw new Error(`topic ${spec.name} exists`);
    const partitions: Partition[] = [];
    const reports: PartitionReport[] = [];
    for (let id = 0; id < spec.partitions; id++) {
      const { partition, report } = Partition.open(
        path.resolve(this.dataDir),
        spec.name,
        id,
        this.logConfig,
        {
          logger: this.logger,
        },
      );
      partitions.push(partition);
      reports.push({ topic: spec.name, partition: id, ...report });
    }
    this.topics.set(spec.name, partitions);
    return reports;
  }

  get(topic: string, id: number): Partition | undefined {
    return this.topics.get(topic)?.[id];
  }

  partitionsOf(topic: string): readonly Partition[] | undefined {
    return this.topics.get(topic);
  }

  /** Topic names, sorted: METADATA answers in this order. */
  topicNames(): string[] {
    return [...this.topics.keys()].sort();
  }

  *all(): Iterable<Partition> {
    for (const partitions of this.topics.values()) yield* partitions;
  }

  enforceRetention(nowMs = Date.now()): void {
    for (const p of this.all()) {
      try {
        p.enforceRetention(nowMs);
      } catch (error) {
        this.logger.error(`${p.name}: retention failed: ${String(error)}`);
      }
    }
  }

  /** Lets every writer finish and flush, then closes every file. */
  async closeAll(): Promise<void> {
    await Promise.all([...this.all()].map((p) => p.close()));
  }
}
