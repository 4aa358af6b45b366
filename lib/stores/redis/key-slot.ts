/**
 * Redis Cluster's hash slot of a key: CRC16 (XMODEM) of the key, or of its hash tag (the part
 * between the first `{` and the next `}`, when not empty), modulo 16384.
 */

/** How many hash slots a Redis Cluster has. */
export const SLOT_COUNT = 16384;

const TABLE = new Uint16Array(256);
for (let i = 0; i < 256; i++) {
  let crc = i << 8;
  for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
  TABLE[i] = crc & 0xffff;
}

/** The hash slot of `key`, as CLUSTER KEYSLOT answers. */
export function keySlot(key: string): number {
  let bytes = Buffer.from(key);
  const open = bytes.indexOf(0x7b); // '{'
  if (open !== -1) {
    const close = bytes.indexOf(0x7d, open + 1); // '}'
    if (close > open + 1) bytes = bytes.subarray(open + 1, close);
  }
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ byte) & 0xff];
  return crc % SLOT_COUNT;
}
