#!/usr/bin/env node
// The `booblik-broker` command as installed by npm (`npx booblik-broker` in a clone). It lives outside
// dist/ so that `npm ci` on a fresh clone can link it (and mark it executable) before anything is built.
// The Node version is checked before the broker's code is even parsed (hence the dynamic import): a
// Node too old for it gets one line and exit code 2, not a SyntaxError.
import nodeSupport from '@booblik/protocol/node-support';

nodeSupport.refuseUnsupportedNode('booblik-broker');
// Not awaited: top-level await is itself a syntax error for Node 12; a failure still ends the process.
void import('../dist/main.js');
