/**
 * A set of line numbers as one bit per line: what the validation pass passes
 * on to the sending pass costs 125 KB for a million lines, however long the
 * lines are.
 */
export class LineBits {
  private bits = new Uint8Array(1024);

  add(line: number): void {
    const byte = line >>> 3;
    if (byte >= this.bits.length) {
      const grown = new Uint8Array(Math.max(byte + 1, this.bits.length * 2));
      grown.set(this.bits);
      this.bits = grown;
    }
    this.bits[byte] = (this.bits[byte] as number) | (1 << (line & 7));
  }

  has(line: number): boolean {
    const byte = line >>> 3;
    return byte < this.bits.length && ((this.bits[byte] as number) & (1 << (line & 7))) !== 0;
  }
}
