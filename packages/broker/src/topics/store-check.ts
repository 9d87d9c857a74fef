import { ErrorCode } from '@booblik/protocol';
import { checkStore, StoreError, StoreUnavailableError, StoreUrlError } from '@booblik/store';
import type { ApplyPlan, ApplyRefusal } from './plan-apply.js';

export type StoreChecker = (url: string, options: { prefix: string }) => Promise<void>;

/**
 * The refusal of an APPLY that creates a topic on a store that does not answer now (a directory
 * that does not exist, an endpoint down, no such bucket, credentials refused), or null. Every new
 * store is asked at once, each bounded by the check's timeout, so the APPLY is answered within it
 * whatever the stores do. A store down for a moment is refused too: the person applying is there to
 * try again, while a topic accepted on it would open without its history and upload nothing.
 */
export async function newStoreRefusal(
  plan: ApplyPlan,
  check: StoreChecker = checkStore,
): Promise<ApplyRefusal | null> {
  const problems = await Promise.all(
    plan.newStores.map(async ({ index, name, storeUrl }) => {
      try {
        await check(storeUrl, { prefix: `${name}/` });
        return null;
      } catch (error) {
        return { index, message: `changes[${index}].storeUrl: ${storeProblem(error, storeUrl)}` };
      }
    }),
  );
  const first = problems.find((p) => p !== null);
  return first === undefined || first === null ? null : { code: ErrorCode.INVALID_ARGUMENT, ...first };
}

/** What is wrong with the store, for the person who named it (no credential: checkStore cut them). */
function storeProblem(error: unknown, storeUrl: string): string {
  if (error instanceof StoreUrlError) return error.message;
  if (error instanceof StoreUnavailableError) {
    return `${JSON.stringify(error.storeUrl)} does not answer (${error.detail}); a topic is created on a store only while it answers: try again once it does`;
  }
  if (error instanceof StoreError) return `${JSON.stringify(error.storeUrl)} cannot be used: ${error.detail}`;
  return `${JSON.stringify(storeUrl.slice(0, 80))} cannot be used: ${String(error)}`;
}
