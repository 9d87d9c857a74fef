export { BrokerProcess, type BrokerProcessOptions, brokerMain, type Exit } from './broker-process.js';
export {
  type FaultMode,
  type FaultProxy,
  type FaultProxyOptions,
  type FaultProxyStats,
  startFaultProxy,
} from './fault-proxy.js';
export { type ReservedPort, reservePorts } from './ports.js';
export { tempDir } from './temp-dir.js';
export { WAIT_TIMEOUT_MS_DEFAULT, waitUntil, within } from './wait.js';
