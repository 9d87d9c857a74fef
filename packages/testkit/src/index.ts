export { BrokerProcess, type BrokerProcessOptions } from './broker-process.js';
export {
  type CertificatePair,
  type IssueOptions,
  makeCertificates,
  type TestCertificates,
} from './certificates.js';
export { brokerMain, cliMain, LISTENING_LINE } from './entry-points.js';
export {
  type FaultMode,
  type FaultProxy,
  type FaultProxyOptions,
  type FaultProxyStats,
  startFaultProxy,
} from './fault-proxy.js';
export { startUnderNonReapingParent } from './non-reaping-parent.js';
export { dyingWithParent } from './parent-death.js';
export { type ReservedPort, reservePorts } from './ports.js';
export { type Exit, ProcessLines } from './process-lines.js';
export { tempDir } from './temp-dir.js';
export { WAIT_TIMEOUT_MS_DEFAULT, waitUntil, within } from './wait.js';
export { startCli, startProcess, WatchedProcess } from './watched-process.js';
