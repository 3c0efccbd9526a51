/** The durable queue's tables: pending messages, the ones given up, and who has sent about which user. */
export const SCHEMA = `
  CREATE TABLE IF NOT EXISTS pending (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    body TEXT NOT NULL,
    source TEXT NOT NULL,
    accepted_at INTEGER NOT NULL,
    first_attempt_at INTEGER
  );
  CREATE TABLE IF NOT EXISTS failed (
    id INTEGER PRIMARY KEY,
    body TEXT NOT NULL,
    source TEXT NOT NULL,
    accepted_at INTEGER NOT NULL,
    reason TEXT NOT NULL,
    status INTEGER,
    attempts INTEGER NOT NULL,
    failed_at INTEGER NOT NULL
  );
  CREATE TABLE IF NOT EXISTS seen_users (
    user_id TEXT NOT NULL,
    source TEXT NOT NULL,
    PRIMARY KEY (user_id, source)
  ) WITHOUT ROWID;
`;
