// Types of what the TGP sandbox gives a tool, for editors and tsc --noEmit.
// Written by `tgp init`; the sandbox itself strips types (esbuild) and
// does not read this file. zod and date-fns are built into the sandbox; for
// their types in an editor: npm i -D zod@3.23.8 date-fns@3.6.0

interface TgpFetchResponse {
  status: number;
  statusText: string;
  ok: boolean;
  url: string;
  headers: Record<string, string>;
  text(): string;
  json(): unknown;
}

interface TgpFetchInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

/**
 * What a tool may do, within the kernel's configuration:
 * `export const permissions: TgpPermissions = { ... }`, a literal (it is
 * read without running the tool). A key left out grants nothing.
 */
interface TgpPermissions {
  /** URL prefixes tgp.fetch may reach (also under sandbox.allowed_fetch_urls). */
  fetch?: readonly string[];
  /** Names of sandbox.secrets tgp.secret may return a placeholder for. */
  secrets?: readonly string[];
  /** none (default), read (a read-only transaction) or write. */
  sql?: "none" | "read" | "write";
  /** Directories tgp.write_file may write under (also under fs.allowed_dirs). */
  write?: readonly string[];
}

declare const tgp: {
  /** Reads a file of the toolbox (a path relative to its root). */
  read_file(path: string): string;
  /** Lists files below a directory, recursively, as root-relative paths. */
  list_files(dir: string): string[];
  /** Writes a file under fs.allowed_dirs; committed when the run ends. */
  write_file(path: string, content: string): void;
  /** Fetches a URL under sandbox.allowed_fetch_urls (and the tool's permissions.fetch). */
  fetch(url: string, init?: TgpFetchInit): Promise<TgpFetchResponse>;
  /**
   * A placeholder for a secret the tool lists in permissions.secrets: put
   * it in a fetch's URL, headers or body and the host sends the value, to
   * the secret's URLs only. The value never reaches the tool.
   */
  secret(name: string): string;
  /** Runs one SQL statement (? placeholders) in the run's transaction. */
  exec_sql(sql: string, params?: unknown[]): unknown;
  /** Adds a line to the run's logs. */
  log(...values: unknown[]): void;
};

declare module "@tgp/std" {
  export function sum(xs: number[]): number;
  export function mean(xs: number[]): number;
  export function groupBy<T>(xs: T[], key: keyof T | ((x: T) => string)): Record<string, T[]>;
  export function pick<T extends object, K extends keyof T>(o: T, keys: K[]): Pick<T, K>;
  export function omit<T extends object, K extends keyof T>(o: T, keys: K[]): Omit<T, K>;
  export function chunk<T>(xs: T[], n: number): T[][];
  export function uniq<T>(xs: T[]): T[];
  export function sortBy<T>(xs: T[], key: keyof T | ((x: T) => unknown)): T[];
  export function round(x: number, digits?: number): number;
  export function clamp(x: number, lo: number, hi: number): number;
  export function slugify(s: string): string;
  export function sleep(ms: number): Promise<void>;
}
