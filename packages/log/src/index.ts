export * from './config.js';
export { EPOCH_HISTORY_FILE, type EpochEnd, type EpochEntry, EpochHistory } from './epoch-history.js';
export * from './errors.js';
export * from './fragment.js';
/** For every other file or directory the broker creates: its name must survive a power cut too. */
export { fsyncDir, mkdirDurable, replaceFileDurably } from './fs-util.js';
export { HighWatermark } from './high-watermark.js';
export { type Logger, silentLogger } from './logger.js';
export { Partition, type PartitionOpenReport } from './partition.js';
export * from './partition-log.js';
export * from './partition-writer.js';
export { type ScanResult, type ScanStop, scanStoredRecords } from './record-scan.js';
export { CORRUPT_FRAGMENT, RemoteSegment } from './remote-segment.js';
export type { RestoreEpoch } from './restore-epoch.js';
export { parseSegmentFileName, partitionDirName, segmentFileName } from './segment-name.js';
export { sharedWorkerScanner, WorkerScanner } from './worker-scanner.js';
