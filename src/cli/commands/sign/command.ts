import type { CommandDeclaration } from "../../shared/declaration.js";
import { SIGN_OPTIONS } from "./options.js";

export const signCommand: CommandDeclaration<typeof SIGN_OPTIONS, [string | undefined]> = {
  name: "sign",
  description: "sign a request body by a signature scheme and print its headers (or a ready curl command)",
  arguments: [{ name: "[file]", description: "the body to sign, byte for byte: a file, or - for standard input" }],
  options: SIGN_OPTIONS,
  examples: [
    "webhook-cli sign --scheme standard --secret whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw body.json",
    "webhook-cli sign --scheme github --secret s3cr3t --event push body.json --curl http://127.0.0.1:8080/hook",
    "webhook-cli sign --scheme twilio --secret AUTH_TOKEN --url https://example.com/sms --content-type application/x-www-form-urlencoded form.txt",
  ],
  async run(options, [file], { io }) {
    const { sign } = await import("./index.js");
    return sign({ ...options, file }, io);
  },
};
