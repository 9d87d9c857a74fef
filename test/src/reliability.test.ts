/**
 * The reliability suite: crash, bad input, full disk, power cut, retention under load and overload, each
 * against the real broker process (checks/). They run one after another, not side by side: each
 * brings a broker and clients of its own, and on a small machine they would time each other, while
 * the overload check times the broker. Run one alone with `--test-name-pattern=<its name>`.
 * `npm run soak` runs the same checks for longer (kit/budget.ts).
 */
import { badInputCheck } from './checks/bad-input.js';
import { crashCheck } from './checks/crash.js';
import { fullDiskCheck } from './checks/full-disk.js';
import { overloadCheck } from './checks/overload.js';
import { powerCutCheck } from './checks/power-cut.js';
import { retentionCheck } from './checks/retention.js';

crashCheck();
badInputCheck();
fullDiskCheck();
powerCutCheck();
retentionCheck();
overloadCheck(); // last: by then the rest of the test run is done, and the machine is the broker's
