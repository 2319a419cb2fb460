/**
 * The service-private directory inside the workspace (token, lock, runners, uploads in progress).
 * Here in the core because the file openers of the thread pool refuse it as well as the supervisor.
 */
export const STATE_DIR = '.taskyard';
