import type { CommandDeclaration } from "../../shared/declaration.js";
import { VERIFY_OPTIONS } from "./options.js";

export const verifyCommand: CommandDeclaration<typeof VERIFY_OPTIONS, [string | undefined]> = {
  name: "verify",
  description: "check a request's signature by its scheme: exit 0 when it verifies, 1 with the reason (which header, which part, lengths, skew)",
  arguments: [{ name: "[file]", description: "the request body, byte for byte: a file, or - for standard input" }],
  options: VERIFY_OPTIONS,
  examples: [
    "webhook-cli verify --scheme github --secret s3cr3t --header 'X-Hub-Signature-256: sha256=…' body.json",
    "webhook-cli verify --secret whsec_… -H 'webhook-id: msg_1' -H 'webhook-timestamp: 1700000000' -H 'webhook-signature: v1,…' --now 2023-11-14T22:13:20Z body.json",
  ],
  async run(options, [file], { io }) {
    const { verify } = await import("./index.js");
    return verify({ ...options, file }, io);
  },
};
