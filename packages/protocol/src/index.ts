export const PROTOCOL_VERSION = 1;
