/** Usage text: `booblik --help` and `booblik <verb> --help`. */
import { DEFAULT_BROKER, DEFAULT_HEALTH_TIMEOUT_MS } from './constants.js';

const common = `Broker: --broker host:port[,host:port...] (tried in turn), else the BOOBLIK_BROKER variable,
else ${DEFAULT_BROKER}.
Credentials (a broker with booblik.auth=required): --user NAME with the password in BOOBLIK_PASSWORD
or --password-file FILE, or --token-file FILE (read again when the token expires); else the
BOOBLIK_USER (with BOOBLIK_PASSWORD) or BOOBLIK_TOKEN variables. Flags win over the environment.
Passwords and tokens are never taken on the command line.
TLS: --tls (Node's default CAs), --tls.ca FILE (else the BOOBLIK_TLS_CA variable), --tls.cert FILE
--tls.key FILE (a client certificate); any of them turns TLS on.
Exit status: 0 done, 1 failed (refused, unreachable, unhealthy, records lost), 2 usage error.`;

export const verbHelp: Record<string, string> = {
  metadata: `booblik metadata [topic...]
  Partitions of the named topics (every topic when none is named): log start and high watermark.
  From a cluster broker also each partition's epoch, primary, in-sync replicas (member@zone), the
  replicas out of sync with how far behind they are, and the largest lag behind the primary.`,
  produce: `booblik produce <topic> [--key K | --partition N] [--ack none|written|forced] [--length-prefixed]
  Records from stdin, one per line (without the newline), or with --length-prefixed as
  int32 big-endian length + bytes. Empty records are skipped and counted. Records are batched.
  Ends with one line on stderr: the records produced and each partition's first and last offset.
  --key K         every record gets key K (UTF-8): they all land in one partition
  --partition N   send to partition N (default: keyless records take the partitions in turn)
  --ack A         none (no answer: records may be lost unseen), written (default), forced (on disk)`,
  consume: `booblik consume <topic> [--partition N] [--from earliest|latest|OFFSET|-N] [--follow]
                [--format text|hex|json] [--max-records N] [--max-bytes N] [--prefer-zone Z]
  Prints the records of every partition of the topic as they arrive, one per line (each partition's
  in offset order). Without --follow it stops at the high watermarks seen at start.
  --partition N   only partition N
  --from F        earliest (default), latest, -N (the last N records of each partition), or an
                  offset (with several partitions, give --partition too)
  --follow        keep waiting for new records (Ctrl-C stops, exit 0). Waits through a failover or a
                  lost broker (a line on stderr says why, another when it resumes); partitions added
                  meanwhile are read from their first record; ends (exit 1) if the topic is deleted
                  or retention removes the position it is at, saying what to run next
  --format F      text: the bytes as they are (default); hex; json: {topic,partition,offset,payload}
  --max-records N stop after N records
  --max-bytes N   bytes per fetch (default 1 MiB); a record takes its payload + 8 header bytes, and
                  one that can never fit is an error saying the least --max-bytes that reads it
  --prefer-zone Z in a cluster, read from the in-sync replica in zone Z when there is one`,
  health: `booblik health [--timeout MS]
  Asks for METADATA; exit 0 and "healthy: ..." when answered in time, else exit 1 and the reason.
  --timeout MS    default ${DEFAULT_HEALTH_TIMEOUT_MS}`,
  topics: `booblik topics list [-l SELECTOR] [--format table|json|yaml]
booblik topics apply -f FILE.yaml [--dry-run]
booblik topics edit NAME
booblik topics delete NAME... [--purge-store] [--dry-run]
booblik topics watch [-l SELECTOR] [--format table|json]
  Topics on a running broker. SELECTOR is Gazette's: k=v, k!=v, k, !k, k in (a,b), k notin (a,b),
  a comma meaning "and"; name=T selects topic T.
  list     the matching topics; --format json prints one array (name, partitions, labels, revision, ...)
  apply    a YAML file (- for stdin): one spec (name, partitions, labels, ...) or a tree whose
           children inherit their parent's fields; revision (on leaves) is the one expected (0: must
           not exist; none: any); delete: true deletes. All of it or nothing. --dry-run shows the
           changes and has the broker check them, changing nothing
  edit     opens the spec in $VISUAL or $EDITOR; saving applies it at the revision shown (when
           refused, the edit is kept in a file the message names)
  delete   deletes the topics (all or none), each at the revision it is seen at. A topic's objects
           in its fragment store stay, and a topic created again under the name on that store
           continues that history; --purge-store removes them too (the broker logs how many).
           --dry-run has the broker check the deletions, changing nothing anywhere
  watch    prints the listing, then again whenever the matching topics change, until Ctrl-C`,
  fragments: `booblik fragments <topic> [--partition N]
  Each segment of the topic's partitions, oldest first: first and last offset, bytes, where it
  lives (local: this broker's disk; store: the topic's store; both) and when it was persisted.
  The last segment of a partition is the one being written (never persisted yet).
  --partition N   only partition N (default: every partition)`,
  partitions: `booblik partitions move TOPIC PARTITION MEMBER [--abandon-records]
       booblik partitions elect TOPIC PARTITION MEMBER --unclean
  In a cluster, gives partition PARTITION of TOPIC to the member MEMBER (a broker id). A replicated
  partition is copied to MEMBER first (answered once it caught up and took over as primary; the old
  primary leaves its replicas); meanwhile stderr shows how far behind MEMBER still is. A partition with one copy is not copied: one that ever had a record
  moves only with --abandon-records, which leaves them behind (the new owner starts it empty).
  elect --unclean: for a replicated partition none of whose in-sync replicas is live, makes MEMBER
  (a live replica out of sync) its primary. This LOSES what only the in-sync replicas held: use it
  when they are gone for good and writes matter more than those records.`,
  brokers: `booblik brokers drain ID
  In a cluster, moves every replicated partition off the broker ID, one at a time: a live broker
  outside its replicas is copied the partition, then ID leaves it (its primary moves if ID led).
  Run it before taking a broker away for good.`,
  users: `booblik users add NAME --password-stdin [--iterations N]
booblik users list [--format table|json]
booblik users remove NAME
  The SCRAM-SHA-256 users the broker knows (with booblik.auth=required, only a superuser may change
  them). The password is salted and hashed here; only the derived keys are sent.
  add       adds NAME, or replaces its password: the first line of stdin is the password
            (printf '%s\\n' "$PW" | booblik users add alice --password-stdin)
  --iterations N  PBKDF2 iterations (default 4096, the least allowed): each login pays them
  list      the users, with their mechanism and iterations; --format json prints one array
  remove    removes NAME (a user the broker does not know is an error)`,
  tokens: `booblik tokens issue --subject NAME --ttl DURATION --keys-file FILE [--claim NAME=VALUE...]
  Prints a token for NAME on stdout (alone: TOKEN=$(booblik tokens issue ...)): an HS256 JWT signed
  with the first key of FILE (the broker's booblik.auth.token.keys.file, lines "ID SECRET"), its
  id as the kid, claims sub, iat and exp. Nothing is sent to a broker.
  --ttl D          how long it is valid: 90s, 15m, 1h, 7d (at most 366d)
  --claim N=V      another claim; groups=a,b is the array ["a","b"]; may be given again`,
  conformance: `booblik conformance <verb> [args...]
  The conformance kit's client contract (capabilities, metadata, produce, produce-keyed, fetch,
  topics-apply, topics-delete, topics-list), printing key=value lines; the broker comes from
  BOOBLIK_BROKER.`,
};

export const mainHelp = `booblik: a command line for the booblik broker

Usage: booblik <command> [options]

Commands:
  metadata [topic...]      show partitions and offsets
  produce <topic>          send records read from stdin
  consume <topic>          print the records of a topic
  health                   check that the broker answers
  topics <sub> ...         list, apply, edit, delete and watch topics
  fragments <topic>        where each segment lives: local disk, store, or both
  partitions move ...      give a partition of a cluster to another broker
  brokers drain ID         move every replicated partition off a broker
  users add|list|remove    the SCRAM users of a broker
  tokens issue             sign a token for a subject with a token keys file
  conformance <verb> ...   the conformance kit's client contract

Run 'booblik <command> --help' for a command's options; 'booblik --version' prints the version.
${common}
`;

export function helpFor(verb: string): string {
  return `${verbHelp[verb]}\n\n${common}\n`;
}
