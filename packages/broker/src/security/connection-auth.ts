/**
 * Who one connection is, as declared steps: `anonymous` (nothing proven), `scramStarted` (a
 * client-first answered, the client-final awaited) and `authenticated` (a principal, maybe until a
 * token's expiry). Any step may start again (re-authentication); a failure at any step leaves the
 * connection anonymous, whatever it was before: a check fails closed.
 */
import { invariant, type ParsedClientFirst, type ScramCredential } from '@booblik/protocol';

export type AuthStep =
  | { readonly kind: 'anonymous' }
  | {
      readonly kind: 'scramStarted';
      readonly first: ParsedClientFirst;
      readonly serverFirst: string;
      /** The user's, or a decoy for an unknown name (its proof can never verify). */
      readonly credential: ScramCredential;
      readonly known: boolean;
    }
  | {
      readonly kind: 'authenticated';
      readonly principal: string;
      readonly mechanism: string;
      /** Unix ms; -1: never. */
      readonly expiresAtMs: number;
      /** Another broker of the cluster (its token carries the broker claim): it may replicate. */
      readonly broker: boolean;
    };

const anonymous: AuthStep = Object.freeze({ kind: 'anonymous' });

export class ConnectionAuth {
  private current: AuthStep = anonymous;

  constructor(
    /** `address:port` of the peer: failures are limited per address. */
    readonly remoteAddress: string,
  ) {}

  get step(): AuthStep {
    return this.current;
  }

  get principal(): string | null {
    return this.current.kind === 'authenticated' ? this.current.principal : null;
  }

  move(next: AuthStep): void {
    invariant(
      next.kind !== 'authenticated' || next.principal !== '',
      () => `auth step ${this.current.kind} -> authenticated without a principal`,
    );
    this.current = next;
  }

  reset(): void {
    this.current = anonymous;
  }
}
