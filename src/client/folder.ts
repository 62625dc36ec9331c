/**
 * The knowledge-folder calls of the client (`client.folder`, docs/knowledge-folder.md):
 * export (files, or a zip), import, and one sync step.
 */
import { z } from 'zod'
import { FolderFiles, FolderImportReport, FolderSyncResult, type FolderFile, type FolderImportQuery, type FolderSyncInput } from '../core/knowledge-folder.js'
import type { CallOptions, RequestSpec } from './http.js'

type Call = <T>(spec: RequestSpec<T>, opts?: CallOptions) => Promise<T>

/**
 * The `/api/knowledge/folder` calls over a client's transport.
 * @example
 * const { files } = await client.folder.export()
 */
export function folderCalls(call: Call) {
  return {
    /** `GET /api/knowledge/folder?format=json`: the caller's knowledge folder as files (seed 002's layout). */
    export: async (opts?: CallOptions) =>
      call({ method: 'GET', path: '/api/knowledge/folder', query: { format: 'json' }, retry: 'idempotent', schema: FolderFiles }, opts),
    /** `GET /api/knowledge/folder`: the same folder as a zip file (what the dashboard downloads). */
    exportZip: async (opts?: CallOptions) =>
      call({ method: 'GET', path: '/api/knowledge/folder', retry: 'idempotent', responseBytes: 'application/zip', schema: z.instanceof(Uint8Array) }, opts),
    /** `POST /api/knowledge/folder/import`: adds, new versions for changes, archives removed entries with `prune`; `dry_run` plans only. */
    import: async (files: FolderFile[], query: FolderImportQuery = {}, opts?: CallOptions) =>
      call({ method: 'POST', path: '/api/knowledge/folder/import', query: { ...query }, body: { files }, retry: 'unsafe', schema: FolderImportReport }, opts),
    /** `POST /api/knowledge/folder/sync`: one sync step; returns the folder to write and the new state. */
    sync: async (input: FolderSyncInput, opts?: CallOptions) =>
      call({ method: 'POST', path: '/api/knowledge/folder/sync', body: input, retry: 'unsafe', schema: FolderSyncResult }, opts),
  }
}
