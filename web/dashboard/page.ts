/** The contract between the dashboard's entry (main.ts) and its pages: what a page gets. */
import type { Me } from './api.js'

/** What a page gets: who is signed in, the route's parameters, and where to draw. */
export interface PageContext {
  me: Me
  params: URLSearchParams
  /** The path part after the page name (`#/entry/ID` → `ID`). */
  rest: string
  root: HTMLElement
}

/** A page draws itself into `ctx.root`. */
export type Page = (ctx: PageContext) => Promise<void> | void
