// Registered with --import: a Node.js without process.execve, as 22.13 and 22.14 are.
delete process.execve;
