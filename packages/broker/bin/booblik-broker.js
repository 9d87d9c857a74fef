#!/usr/bin/env node
// The `booblik-broker` command as installed by npm (`npx booblik-broker` in a clone). It lives outside
// dist/ so that `npm ci` on a fresh clone can link it (and mark it executable) before anything is built.
import '../dist/main.js';
