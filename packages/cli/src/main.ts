#!/usr/bin/env node
/** The `booblik` executable. */
import { runProcess } from './process.js';

await runProcess(process.argv.slice(2));
