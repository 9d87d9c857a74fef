/** What booblik makes of a Node version on a given day (node-support.cjs). */
export interface NodeSupport {
  /** The supported majors, lowest first: those of `engines` in package.json. */
  supported: number[];
  recommended: number;
  /** Set when this Node must not run booblik: one line naming the supported versions. */
  refusal?: string;
  /** Set when this Node runs booblik but should not: past its end of life, or never tested. */
  warning?: string;
}
export declare const supportedMajors: readonly number[];
export declare const recommendedMajor: number;
/** End of life of each supported major, as YYYY-MM-DD. */
export declare const endOfLife: Readonly<Record<number, string>>;
export declare function nodeSupport(version: string, now: Date): NodeSupport;
/** Exits 2 with one line on stderr when this Node is refused; returns its support otherwise. */
export declare function refuseUnsupportedNode(program?: string): NodeSupport;
