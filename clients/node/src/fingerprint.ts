import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

export const FINGERPRINT_PATTERN = /^sha256:[0-9a-f]{64}$/;

/**
 * The operating system's stable id of this installation: /etc/machine-id on Linux, IOPlatformUUID on macOS,
 * MachineGuid on Windows. Falls back to the host name (less stable) when none can be read.
 */
export function machineId(): string {
  try {
    if (process.platform === 'linux') {
      for (const file of ['/etc/machine-id', '/var/lib/dbus/machine-id']) {
        const id = readOrEmpty(file);
        if (id) return id;
      }
    } else if (process.platform === 'darwin') {
      const out = execFileSync('ioreg', ['-rd1', '-c', 'IOPlatformExpertDevice'], { encoding: 'utf8', timeout: 5000 });
      const match = /"IOPlatformUUID"\s*=\s*"([^"]+)"/.exec(out);
      if (match) return match[1];
    } else if (process.platform === 'win32') {
      const out = execFileSync('reg', ['query', 'HKLM\\SOFTWARE\\Microsoft\\Cryptography', '/v', 'MachineGuid'], {
        encoding: 'utf8',
        timeout: 5000,
      });
      const match = /MachineGuid\s+REG_SZ\s+(\S+)/.exec(out);
      if (match) return match[1];
    }
  } catch {
    // fall through to the host name
  }
  return `hostname:${hostname()}`;
}

function readOrEmpty(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return '';
  }
}

/**
 * The default machine fingerprint: SHA-256 of the OS machine id and an application salt, so two applications
 * on one machine get different fingerprints and the raw machine id never leaves the machine.
 */
export function defaultFingerprint(appSalt: string, id: string = machineId()): string {
  return `sha256:${createHash('sha256').update(`${appSalt}\0${id}`, 'utf8').digest('hex')}`;
}
