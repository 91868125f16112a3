export { LicenseClient } from './client.js';
export type { HeartbeatLoop, HeartbeatLoopOptions, LicenseClientOptions, MachineInfo } from './client.js';
export { checkOffline, parseLicenseFile, verifyDocument } from './check.js';
export { canonicalBytes, KeySet, keyIdOf, verifySignature, SIGNATURE_PREFIX } from './crypto.js';
export { armor, dearmor, ACTIVATION_REQUEST_LABEL, LICENSE_FILE_LABEL } from './armor.js';
export { LicenseServerError, NetworkError, VerificationError } from './errors.js';
export { defaultFingerprint, machineId } from './fingerprint.js';
export type { ClientState } from './state.js';
export type * from './types.js';
