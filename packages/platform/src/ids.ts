import { randomFillSync } from 'node:crypto';
import { v7 as uuidv7, validate as uuidValidate } from 'uuid';

// Random bytes come from a pool refilled 8 KiB at a time: the uuid package's default source asks
// WebCrypto for 16 bytes per id, which cost about a tenth of the service's CPU on the push path
// (two ids per pushed invoice). The ids are still 74 random bits each from the OS CSPRNG.
const pool = new Uint8Array(16 * 512);
let offset = pool.length;
function random16(): Uint8Array {
  if (offset >= pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const bytes = pool.subarray(offset, offset + 16);
  offset += 16;
  return bytes;
}

// Monotonic within a process, as the uuid package does it: a new millisecond starts the sequence
// at a random value; ids within the same millisecond increment it, so ids sort in creation order.
const state = { msecs: -Infinity, seq: 0 };

/** A new time-ordered UUIDv7 string. */
export function newId(): string {
  const random = random16();
  const now = Date.now();
  if (now > state.msecs) {
    state.seq = (random[6]! << 23) | (random[7]! << 16) | (random[8]! << 8) | random[9]!;
    state.msecs = now;
  } else {
    state.seq = (state.seq + 1) | 0;
    if (state.seq === 0) state.msecs++;
  }
  return uuidv7({ random, msecs: state.msecs, seq: state.seq });
}

export function isUuid(value: string): boolean {
  return uuidValidate(value);
}
