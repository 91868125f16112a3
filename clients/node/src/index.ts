// The declarations use Node's types (KeyObject, fetch): the directive keeps them resolvable for an application that
// does not list "node" in its tsconfig "types" (TypeScript 6 and later no longer add it by themselves).
/// <reference types="node" preserve="true" />
export { LicenseClient, RelaySeat } from './client.js';
export type { HeartbeatLoop, HeartbeatLoopOptions, LicenseClientOptions, MachineInfo, RelayHeartbeatOptions } from './client.js';
export { RELAY_POOL_LABEL, verifyRelayLease, verifyRelayPool } from './relay.js';
export type { RelayCheckInput, RelayLease, RelayLeaseAnswer, RelayPool, RelayPoolCheckInput, RelayReason, Verified } from './relay.js';
export { checkOffline, parseLicenseFile, verifyAnswerDocument, verifyDocument, verifyEnvelopeFile } from './check.js';
export { canonicalBytes, KeySet, keyIdOf, verifySignature, SIGNATURE_PREFIX } from './crypto.js';
export { decodeBase64url, endorsementMessage, listedKeys, resolveTrust, verifyEndorsement, verifyEnvelope } from './envelope.js';
export { armor, dearmor, ACTIVATION_REQUEST_LABEL, LICENSE_FILE_LABEL } from './armor.js';
export { LicenseServerError, NetworkError, StateError, VerificationError } from './errors.js';
export { defaultFingerprint, machineId } from './fingerprint.js';
export type { ClientState } from './state.js';
export type * from './types.js';
