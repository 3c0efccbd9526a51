/**
 * What the validation pass decided about each line, handed to the sending pass so it neither
 * checks nor selects a line again: two bits per line, 250 KB for a million lines however long the
 * lines are. A line never set is not sent (bad, filtered out, before --from-line, or appended
 * after the validation pass read the file).
 */
export const LinePlan = {
  /** Not sent. */
  skip: 0,
  /** Sent; its body bytes (an envelope's recorded bytes, a re-serialized message) are parsed out again. */
  parse: 1,
  /** Sent as read: a bare message whose line is exactly JSON.stringify's output; its facts are scanned (scan.ts). */
  canonical: 2,
  /** Sent as read under --raw: not a known message. */
  asRead: 3,
} as const;

export type LinePlan = (typeof LinePlan)[keyof typeof LinePlan];

export class LineBits {
  private bits = new Uint8Array(1024);

  set(line: number, plan: LinePlan): void {
    const byte = line >>> 2;
    if (byte >= this.bits.length) {
      const grown = new Uint8Array(Math.max(byte + 1, this.bits.length * 2));
      grown.set(this.bits);
      this.bits = grown;
    }
    const shift = (line & 3) << 1;
    this.bits[byte] = ((this.bits[byte] as number) & ~(3 << shift)) | (plan << shift);
  }

  get(line: number): LinePlan {
    const byte = line >>> 2;
    return byte < this.bits.length ? ((((this.bits[byte] as number) >>> ((line & 3) << 1)) & 3) as LinePlan) : LinePlan.skip;
  }
}
