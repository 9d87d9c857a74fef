/** Errors of the security service. */

/** users.json does not parse: the broker refuses to start rather than open to everyone or no one by surprise. */
export class UserStoreCorruptError extends Error {
  override name = 'UserStoreCorruptError';
}

/** A security setting cannot be used (a missing keys file, a bootstrap user that does not parse). */
export class SecurityConfigError extends Error {
  override name = 'SecurityConfigError';
}

/** A change of users that was refused or whose outcome is not known: `code` is the wire code to answer. */
export class UserChangeError extends Error {
  override name = 'UserChangeError';
  constructor(
    readonly code: number,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}
