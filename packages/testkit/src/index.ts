export {
  type FaultMode,
  type FaultProxy,
  type FaultProxyOptions,
  type FaultProxyStats,
  startFaultProxy,
} from './fault-proxy.js';
export { WAIT_TIMEOUT_MS_DEFAULT, waitUntil, within } from './wait.js';
