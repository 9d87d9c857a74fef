#!/usr/bin/env node
// The `booblik` command as installed by npm. It lives outside dist/ so that `npm ci` on a fresh clone
// can link it (and mark it executable) before anything is built; `npm run build` makes dist/.
// The Node version is checked before the command's code is even parsed (hence the dynamic import): a
// Node too old for it gets one line and exit code 2, not a SyntaxError.
import nodeSupport from '@booblik/protocol/node-support';

nodeSupport.refuseUnsupportedNode('booblik');
// Not awaited: top-level await is itself a syntax error for Node 12; a failure still ends the process.
void import('../dist/main.js');
