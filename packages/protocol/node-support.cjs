'use strict';
// Which Node.js versions booblik runs on. Plain CommonJS in the syntax of the oldest Nodes, so that
// any Node parses and runs it: every entry point (booblik-broker, booblik, npm start, npm test, npm
// run cluster) calls it before it loads code written for a newer Node, and a Node too old for that
// code gets one line and exit code 2 instead of a SyntaxError from deep inside.
//
//   node packages/protocol/node-support.cjs [program]   exit 2 with one line when this Node is refused

// The supported lines are the majors of `engines` in this package's package.json ("^20.19.0 ||
// ^22.12.0 || ..."): every package of the workspace says the same, and a test holds them to it.
var engines = require('./package.json').engines.node;
var supportedMajors = engines
  .split('||')
  .map(function (range) {
    return Number(/\d+/.exec(range)[0]);
  })
  .sort(function (a, b) {
    return a - b;
  });

/**
 * The major booblik recommends: of the lines with security fixes for a while yet, the one that
 * measured fastest (docs/benchmarks.md, "On each Node.js": Node 26 runs twice the full garbage
 * collections of 24 under the same produce load).
 */
var recommendedMajor = 24;

/** End of life of each supported line (Node's release schedule): past it, no more security fixes. */
var endOfLife = { 20: '2026-04-30', 22: '2027-04-30', 24: '2028-04-30', 26: '2029-04-30' };

/** "20, 22, 24 and 26" */
function listMajors(majors) {
  return majors.length < 2
    ? majors.join('')
    : majors.slice(0, -1).join(', ') + ' and ' + majors[majors.length - 1];
}

/**
 * What booblik makes of a Node version ("20.20.2", as in process.versions.node) on a given day:
 * `refusal` for a line older than every supported one (the program must not start), `warning` for a
 * supported line past its end of life, or a line no release is tested on (the program starts and
 * says so once).
 */
function nodeSupport(version, now) {
  var major = Number(String(version).split('.')[0]);
  var runsOn =
    'booblik runs on Node.js ' + listMajors(supportedMajors) + ' (' + recommendedMajor + ' recommended)';
  var result = { supported: supportedMajors.slice(), recommended: recommendedMajor };
  if (!(major >= supportedMajors[0])) {
    result.refusal = 'Node.js ' + version + ' is not supported: ' + runsOn;
  } else if (supportedMajors.indexOf(major) < 0) {
    result.warning = 'Node.js ' + version + ' is not a version booblik is tested on: ' + runsOn;
  } else if (endOfLife[major] && now.toISOString().slice(0, 10) > endOfLife[major]) {
    result.warning =
      'Node.js ' +
      version +
      ' is past its end of life (' +
      endOfLife[major] +
      ') and gets no more security fixes: ' +
      runsOn;
  }
  return result;
}

/** Exits 2 with one line on stderr when this Node is refused; returns the support of this Node otherwise. */
function refuseUnsupportedNode(program) {
  var support = nodeSupport(process.versions.node, new Date());
  if (support.refusal) {
    process.stderr.write((program || 'booblik') + ': ' + support.refusal + '\n');
    process.exit(2);
  }
  return support;
}

module.exports = {
  supportedMajors: supportedMajors,
  recommendedMajor: recommendedMajor,
  endOfLife: endOfLife,
  nodeSupport: nodeSupport,
  refuseUnsupportedNode: refuseUnsupportedNode,
};

if (require.main === module) refuseUnsupportedNode(process.argv[2]);
