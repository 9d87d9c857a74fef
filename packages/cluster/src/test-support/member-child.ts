/**
 * A member in a process of its own, for tests that SIGKILL it: joins, prints one JSON line
 * `{"leaseId": "...", "createRevision": N}` on stdout, then holds its lease until killed.
 *
 *   node member-child.js <endpoint> <cluster> <member id> <leaseMs>
 */
import { connectEtcd } from '../etcd-client.js';
import { Member } from '../member.js';

const [endpoint, cluster, id, leaseMs] = process.argv.slice(2);
if (endpoint === undefined || cluster === undefined || id === undefined || leaseMs === undefined) {
  process.stderr.write('usage: member-child <endpoint> <cluster> <member id> <leaseMs>\n');
  process.exit(2);
}
const client = connectEtcd({ endpoints: [endpoint] });
const member = await Member.join(client, {
  cluster,
  member: { id, zone: 'a', address: '127.0.0.1:9' },
  leaseMs: Number(leaseMs),
});
member.on('lost', (error) => {
  process.stderr.write(`${error.message}\n`);
  process.exit(3);
});
process.stdout.write(
  `${JSON.stringify({ leaseId: member.leaseId, createRevision: member.createRevision })}\n`,
);
// The lease's keepalive timer holds the process; this keeps it even if that changes.
setInterval(() => {}, 60_000);
