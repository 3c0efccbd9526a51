/**
 * The environment variable that holds the shared secret: read by the secret resolver (secret.ts)
 * and named in the option tables' help, which import it from here so that `--help` loads no resolver.
 */
export const SECRET_ENV = "WEBHOOK_SECRET";
