#!/usr/bin/env node
// The `booblik` command as installed by npm. It lives outside dist/ so that `npm ci` on a fresh clone
// can link it (and mark it executable) before anything is built; `npm run build` makes dist/.
import '../dist/main.js';
