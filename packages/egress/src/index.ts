export { classifyIPv4, classifyIp, parseIPv4, isLoopbackIPv4 } from './address.js';
export type { AddressClass, BlockReason, IPv4BlockReason } from './address.js';
export { checkHostName, checkDestinationAddress, describeBlockReason } from './host-policy.js';
export type { UrlPolicy, HostCheck, AddressCheck } from './host-policy.js';
export { checkReceiverUrl, MAX_RECEIVER_URL_BYTES } from './url-policy.js';
export type { UrlCheck, UrlCheckCode } from './url-policy.js';
export { resolvePublicIPv4, checkConnectedAddress, systemLookup } from './resolve.js';
export type { LookupFn, ResolveResult, ConnectedAddressCheck } from './resolve.js';
